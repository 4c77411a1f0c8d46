// Markdown and self-contained HTML reports.
#include "experiment/report.h"

#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "core/version.h"
#include "io/atomic_file.h"

namespace attn {
namespace fs = std::filesystem;
namespace {

struct Figure {
  std::string title, png;  // png: path relative to the report directory
  fs::path png_abs;
};

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
    fig.title = f.value("title", png.stem().string());
    fig.png_abs = png;
    fig.png = fs::relative(png, out_dir).string();
    figs.push_back(fig);
  }
  return figs;
}

std::string base64(const std::string& bytes) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
  std::string out;
  size_t i = 0;
  for (; i + 2 < bytes.size(); i += 3) {
    const unsigned v = (uint8_t(bytes[i]) << 16) | (uint8_t(bytes[i + 1]) << 8) | uint8_t(bytes[i + 2]);
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

std::string html_escape(const std::string& s) {
  std::string out;
  for (char c : s) {
    if (c == '<') out += "&lt;";
    else if (c == '>') out += "&gt;";
    else if (c == '&') out += "&amp;";
    else if (c == '"') out += "&quot;";
    else out += c;
  }
  return out;
}

}  // namespace

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

int report_exit_code(const ReportCounts& n) {
  return n.fail > 0 ? 1 : n.inconclusive > 0 ? 3 : 0;
}

std::string report_counts_text(const ReportCounts& n) {
  std::string out = std::to_string(n.pass) + " of " + std::to_string(n.total) + " claims pass";
  if (n.fail) out += ", " + std::to_string(n.fail) + " fail";
  if (n.inconclusive) out += ", " + std::to_string(n.inconclusive) + " inconclusive";
  if (n.not_evaluated) out += ", " + std::to_string(n.not_evaluated) + " not evaluated at this size";
  return out;
}

void report_write(const std::string& out_dir, const std::string& title,
                  const std::vector<ReportSection>& sections) {
  const std::string verdict = report_counts_text(report_counts(sections));

  std::string md = "# " + title + "\n\n" + verdict + ". attnlab " + kVersion + " (" + kGitCommit + ").\n";
  std::string html = "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>" +
                     html_escape(title) + "</title>\n<style>body{font-family:sans-serif;max-width:"
                     "60em;margin:2em auto}.pass{color:#087a2b;font-weight:bold}.fail{color:#b3001b;"
                     "font-weight:bold}img{max-width:100%}td,th{padding:.2em .6em;text-align:left;"
                     "vertical-align:top}</style></head><body>\n<h1>" + html_escape(title) +
                     "</h1>\n<p>" + html_escape(verdict) + ". attnlab " + kVersion + " (" +
                     kGitCommit + ").</p>\n";
  for (const auto& s : sections) {
    md += "\n## " + s.name + "\n\n";
    html += "<h2>" + html_escape(s.name) + "</h2>\n";
    if (!s.description.empty()) {
      md += s.description + "\n\n";
      html += "<p>" + html_escape(s.description) + "</p>\n";
    }
    const std::string runs = "Spec `" + s.spec_path + "`; results in `" + s.dir + "`; " +
                             std::to_string(s.runs_ok) + " runs ok, " +
                             std::to_string(s.runs_failed) + " failed.";
    md += runs + "\n\n";
    html += "<p>" + html_escape(runs) + "</p>\n";
    if (!s.note.empty()) {
      md += "> " + s.note + "\n\n";
      html += "<p><em>" + html_escape(s.note) + "</em></p>\n";
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
        md += "| **" + name + "** | " + c.id + ": " + c.text + " | " + c.detail + " |\n";
        html += std::string("<tr><td class=\"") + css + "\">" + name + "</td><td>" + html_escape(c.id + ": " + c.text) + "</td><td>" +
                html_escape(c.detail) + "</td></tr>\n";
      }
      html += "</table>\n";
      md += "\n";
    }
    for (const auto& fig : figures_of(s, out_dir)) {
      md += "![" + fig.title + "](" + fig.png + ")\n\n";
      std::ifstream in(fig.png_abs, std::ios::binary);
      const std::string bytes((std::istreambuf_iterator<char>(in)), {});
      html += "<figure><img alt=\"" + html_escape(fig.title) + "\" src=\"data:image/png;base64," +
              base64(bytes) + "\"><figcaption>" + html_escape(fig.title) + "</figcaption></figure>\n";
    }
  }
  html += "</body></html>\n";
  fs::create_directories(out_dir);
  atomic_file_write((fs::path(out_dir) / "report.md").string(), md);
  atomic_file_write((fs::path(out_dir) / "report.html").string(), html);
}

}  // namespace attn
