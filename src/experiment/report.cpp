// Markdown and self-contained HTML reports.
#include "experiment/report.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/error.h"
#include "core/float_env.h"
#include "core/home.h"
#include "core/version.h"
#include "experiment/experiment_dir.h"
#include "experiment/selection.h"
#include "experiment/spec.h"
#include "experiment/store.h"
#include "io/atomic_file.h"
#include "io/text_escape.h"
#include "ops/blas.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

struct Figure {
  std::string name, title, png;  // png: path relative to the report directory
  fs::path png_abs;
};

// The plots and claim docs of a section's spec (none when the spec cannot be read: its
// section's note says why).
Spec spec_of(const ReportSection& s) {
  if (s.spec_path.empty() || !fs::exists(s.spec_path)) return {};
  try {
    return spec_load(s.spec_path, {}, false);
  } catch (const UserError&) {
    return {};
  }
}

std::vector<Figure> figures_of(const ReportSection& s, const std::string& out_dir) {
  std::vector<Figure> figs;
  const fs::path index = fs::path(s.dir) / "figures" / "index.json";
  std::ifstream in(index);
  if (!in) return figs;
  const auto j = nlohmann::json::parse(in, nullptr, false);
  if (!j.is_array()) return figs;
  for (const auto& f : j) {
    if (!f.contains("png") || !f["png"].is_string()) continue;
    fs::path png = f["png"].get<std::string>();
    if (png.is_relative()) png = fs::path(s.dir) / "figures" / png.filename();
    if (!fs::exists(png)) continue;
    Figure fig;
    fig.name = f.value("name", png.stem().string());
    fig.title = f.value("title", png.stem().string());
    fig.png_abs = png;
    fig.png = fs::relative(png, out_dir).string();
    figs.push_back(fig);
  }
  return figs;
}

// Why the plotting script skipped a plot: figures/skipped.json ({name: reason}).
nlohmann::json skipped_of(const ReportSection& s) {
  std::ifstream in(fs::path(s.dir) / "figures" / "skipped.json");
  if (!in) return nlohmann::json::object();
  auto j = nlohmann::json::parse(in, nullptr, false);
  return j.is_object() ? j : nlohmann::json::object();
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v =
        (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += table[v & 63];
  }
  if (i + 1 == bytes.size()) {
    const unsigned v = uint8_t(bytes[i]) << 16;
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += "==";
  } else if (i + 2 == bytes.size()) {
    const unsigned v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8);
    out += table[v >> 18];
    out += table[(v >> 12) & 63];
    out += table[(v >> 6) & 63];
    out += '=';
  }
  return out;
}

// The section's selection table ([select]): markdown and HTML, "" when the spec has none or
// its directory has no store.
std::pair<std::string, std::string> selection_of(const ReportSection& s, const Spec& spec) {
  const fs::path store = fs::path(s.dir) / "results.sqlite";
  if (!spec.select.active() || !fs::exists(store)) return {};
  std::vector<StoredRun> runs;
  try {
    runs = experiment_plan_runs(ResultsStore(store.string(), StoreAccess::kRead));
  } catch (const IoError&) {
    return {};
  }
  const auto table = selection_table(selection_make(spec.select, spec_swept_keys(spec), runs));
  const std::string intro = "Selected on validation: " + selection_text(spec.select) +
                            " (claims and figures use the chosen runs; every candidate is in " +
                            "`selection.csv`, the chosen rows in `selected.csv`).";
  std::string md = intro + "\n\n", html = "<p>" + report_html_text(intro) + "</p>\n<table>";
  for (size_t r = 0; r < table.size(); ++r) {
    md += "|";
    html += "<tr>";
    for (const auto& cell : table[r]) {
      md += " " + report_md_cell(cell) + " |";
      html += (r == 0 ? "<th>" : "<td>") + xml_escape(cell) + (r == 0 ? "</th>" : "</td>");
    }
    md += "\n";
    html += "</tr>\n";
    if (r == 0) {
      md += "|";
      for (size_t c = 0; c < table[0].size(); ++c) md += "---|";
      md += "\n";
    }
  }
  return {md + "\n", html + "</table>\n"};
}

// A claim's doc ("docs/x.md#anchor") as a link relative to the report directory.
std::string doc_link(const std::string& doc, const std::string& out_dir) {
  const size_t hash = doc.find('#');
  const fs::path file = fs::absolute(fs::path(attnlab_home()) / doc.substr(0, hash));
  const fs::path from = fs::absolute(out_dir);
  return fs::relative(file, from).generic_string() +
         (hash == std::string::npos ? "" : doc.substr(hash));
}

}  // namespace

std::string report_md_cell(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '|') out += "\\|";
    else if (c == '\n') out += ' ';
    else out += c;
  }
  return out;
}

std::string report_html_text(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i) {
    const size_t close = s[i] == '`' ? s.find('`', i + 1) : std::string::npos;
    if (close == std::string::npos) {
      out += xml_escape(std::string(1, s[i]));
      continue;
    }
    out += "<code>" + xml_escape(s.substr(i + 1, close - i - 1)) + "</code>";
    i = close;
  }
  return out;
}

std::string report_claim_lines(const std::vector<ReportSection>& sections) {
  std::string out;
  for (const auto& s : sections)
    for (const auto& c : s.claims)
      out += std::string(verdict_name(c.verdict)) + " " + s.name + "/" + c.id + ": " + c.text +
             " -- " + c.detail + "\n";
  return out;
}

ReportCounts report_counts(const std::vector<ReportSection>& sections) {
  ReportCounts n;
  for (const auto& s : sections)
    for (const auto& c : s.claims) {
      ++n.total;
      n.pass += c.verdict == Verdict::Pass;
      n.fail += c.verdict == Verdict::Fail;
      n.inconclusive += c.verdict == Verdict::Inconclusive;
      n.not_evaluated += c.verdict == Verdict::NotEvaluated;
    }
  return n;
}

std::string report_path_text(const std::string& path, const std::string& base) {
  std::error_code ec;
  const fs::path full = fs::weakly_canonical(fs::absolute(path, ec), ec);
  for (const fs::path& root : {fs::path(base), fs::path(attnlab_home()), fs::current_path(ec)}) {
    if (root.empty()) continue;
    const fs::path rel = full.lexically_relative(fs::weakly_canonical(fs::absolute(root, ec), ec));
    if (!rel.empty() && *rel.begin() != "..") return rel.generic_string();
  }
  return path;
}

int report_exit_code(const ReportCounts& n) {
  return n.fail > 0 ? 1 : n.inconclusive > 0 ? 3 : 0;
}

std::string report_counts_text(const ReportCounts& n) {
  std::string out = std::to_string(n.pass) + " of " + std::to_string(n.total) + " claims pass";
  if (n.fail) out += ", " + std::to_string(n.fail) + " fail";
  if (n.inconclusive) out += ", " + std::to_string(n.inconclusive) + " inconclusive";
  if (n.not_evaluated)
    out += ", " + std::to_string(n.not_evaluated) + " not evaluated at this size";
  return out;
}

void report_write(const std::string& out_dir, const std::string& title,
                  const std::vector<ReportSection>& sections) {
  const std::string verdict = report_counts_text(report_counts(sections));

  const std::string built = std::string("attnlab ") + kVersion + " (" + kGitCommit +
                            "), OpenBLAS core " + blas_core_name() + ", subnormals " +
                            subnormals_text();
  std::string md = "# " + title + "\n\n" + verdict + ". " + built + ".\n";
  std::string html =
      "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" + xml_escape(title) +
      "</title>\n<style>body{font-family:sans-serif;max-width:"
      "60em;margin:2em auto}.pass{color:#087a2b;font-weight:bold}.fail{color:#b3001b;"
      "font-weight:bold}img{max-width:100%}td,th{padding:.2em .6em;text-align:left;"
      "vertical-align:top}</style></head><body>\n<h1>" +
      xml_escape(title) + "</h1>\n<p>" + xml_escape(verdict) + ". " + xml_escape(built) + ".</p>\n";
  for (const auto& s : sections) {
    const Spec spec = spec_of(s);
    md += "\n## " + s.name + "\n\n";
    html += "<h2>" + xml_escape(s.name) + "</h2>\n";
    if (!s.description.empty()) {
      md += s.description + "\n\n";
      html += "<p>" + report_html_text(s.description) + "</p>\n";
    }
    const std::string runs = "Spec `" + report_path_text(s.spec_path, attnlab_home()) +
                             "`; results in `" + report_path_text(s.dir, out_dir) + "`; " +
                             std::to_string(s.runs_ok) + " runs ok, " +
                             std::to_string(s.runs_failed) + " failed.";
    md += runs + "\n\n";
    html += "<p>" + report_html_text(runs) + "</p>\n";
    if (!s.note.empty()) {
      md += "> " + s.note + "\n\n";
      html += "<p><em>" + report_html_text(s.note) + "</em></p>\n";
    }
    if (!s.claims.empty()) {
      md += "| result | claim | numbers |\n|---|---|---|\n";
      html += "<table><tr><th>result</th><th>claim</th><th>numbers</th></tr>\n";
      for (const auto& c : s.claims) {
        const std::string name = verdict_name(c.verdict);
        const char* css = c.verdict == Verdict::Pass           ? "pass"
                          : c.verdict == Verdict::Fail         ? "fail"
                          : c.verdict == Verdict::Inconclusive ? "inconclusive"
                                                               : "not-evaluated";
        std::string doc;  // a failing or undecided claim links to the paragraph explaining it
        const bool explain = c.verdict == Verdict::Fail || c.verdict == Verdict::Inconclusive;
        for (const auto& cs : spec.claims)
          if (cs.id == c.id && explain) doc = cs.doc;
        const std::string link = doc.empty() ? "" : doc_link(doc, out_dir);
        md += "| **" + name + "** | " + report_md_cell(c.id + ": " + c.text) +
              (link.empty() ? "" : " ([why](" + report_md_cell(link) + "))") + " | " +
              report_md_cell(c.detail) + " |\n";
        html += std::string("<tr><td class=\"") + css + "\">" + name + "</td><td>" +
                report_html_text(c.id + ": " + c.text) +
                (link.empty() ? "" : " (<a href=\"" + xml_escape(link) + "\">why</a>)") +
                "</td><td>" + report_html_text(c.detail) + "</td></tr>\n";
      }
      html += "</table>\n";
      md += "\n";
    }
    const auto [selection_md, selection_html] = selection_of(s, spec);
    md += selection_md;
    html += selection_html;
    const auto figs = figures_of(s, out_dir);
    for (const auto& fig : figs) {
      md += "![" + fig.title + "](" + fig.png + ")\n\n";
      std::ifstream in(fig.png_abs, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      html += "<figure><img alt=\"" + xml_escape(fig.title) + "\" src=\"data:image/png;base64," +
              base64(bytes) + "\"><figcaption>" + xml_escape(fig.title) +
              "</figcaption></figure>\n";
    }
    // Every plot of the spec that has no figure, and why.
    const auto skipped = skipped_of(s);
    std::vector<std::string> missing;
    for (const auto& plot : spec.plots) {
      bool drawn = false;
      for (const auto& fig : figs) drawn = drawn || fig.name == plot.name;
      if (drawn) continue;
      const auto why = skipped.find(plot.name);
      missing.push_back("`" + plot.name + "`: " +
                        (why != skipped.end() && why->is_string() ? why->get<std::string>()
                         : s.note.empty() ? "not drawn"
                                          : "not drawn (see the note above)"));
    }
    if (!missing.empty()) {
      md += "Figures not drawn:\n\n";
      html += "<p>Figures not drawn:</p>\n<ul>\n";
      for (const auto& m : missing) {
        md += "- " + m + "\n";
        html += "<li>" + report_html_text(m) + "</li>\n";
      }
      md += "\n";
      html += "</ul>\n";
    }
  }
  html += "</body></html>\n";
  fs::create_directories(out_dir);
  atomic_file_write((fs::path(out_dir) / "report.md").string(), md);
  atomic_file_write((fs::path(out_dir) / "report.html").string(), html);
}

}  // namespace attn
