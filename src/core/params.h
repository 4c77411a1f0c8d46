// Typed, validated parameters: the one place where a task's (later a model's) knobs are
// declared with their types, defaults, ranges and help text.
//
// A ParamSpec list is the schema; Params holds resolved values, starting from the
// defaults. Every setter validates (unknown key with a did-you-mean, wrong type, out of
// range, not one of the choices) and throws UserError naming "<section>.<key>".
// The command line (`--set task.N=16`) and TOML specs both go through here.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <variant>
#include <vector>

namespace attn {

// NameList: a list of names, e.g. eval.probes = ["rank_pair"] (a TOML array of strings; on the
// command line "[a, b]" or "a,b"; each name non-empty, and one of `choices` when it has any).
enum class ParamType { Bool, Int, Real, String, RealList, NameList };
using ParamValue =
    std::variant<bool, int64_t, double, std::string, std::vector<double>, std::vector<std::string>>;

struct ParamSpec {
  std::string name;
  ParamType type;
  ParamValue default_value;
  std::string help;
  std::vector<std::string> choices;  // String, NameList: the allowed values (empty: any text)
  double min = -std::numeric_limits<double>::infinity();  // Int/Real: inclusive bounds
  double max = std::numeric_limits<double>::infinity();
  // An execution setting: how a run is computed, not what (e.g. train.distributed). Left
  // out of Params::to_json(), so it is not part of a run's id.
  bool execution_only = false;
  // A task key that changes only the labels, never the inputs (sample i's x is the same for
  // every value): run points differing only in such keys share their inputs, so the runner
  // may execute them as one run group (experiment/run_groups.h). Part of the run id as usual.
  bool label_only = false;
  // A key added after results were stored: left out of Params::to_json() (hence of run ids)
  // while it equals its default, so that existing stores resume with their old ids.
  bool id_omit_default = false;
  // A key renamed after results were stored: its old spelling, which stays the spelling of
  // stored configurations (Params::to_json, hence run ids, and the stored parameter columns)
  // and is accepted as an alias wherever the key is set or read. Empty: not renamed.
  std::string stored_as;
};

// Constructors for schema rows, so that task files read as tables.
ParamSpec param_int(std::string name, int64_t def, std::string help, double min = -1e300,
                    double max = 1e300);
ParamSpec param_real(std::string name, double def, std::string help, double min = -1e300,
                     double max = 1e300);
ParamSpec param_bool(std::string name, bool def, std::string help);
ParamSpec param_choice(std::string name, std::string def, std::vector<std::string> choices,
                       std::string help);
// A list of reals (e.g. a λ grid); min/max bound every element; an empty list is allowed
// only when allow_empty.
ParamSpec param_real_list(std::string name, std::vector<double> def, std::string help,
                          double min = -1e300, double max = 1e300);

// A list of names (ParamType::NameList); `choices`, when given, are the allowed names. A value
// given as one string is read as the command line writes the list ("a,b", "[a, b]"); an empty
// array (which TOML cannot type) is the empty list.
ParamSpec param_name_list(std::string name, std::vector<std::string> def, std::string help,
                          std::vector<std::string> choices = {});

// The same row with id_omit_default set (a key added after results were stored).
ParamSpec param_id_omit_default(ParamSpec spec);
// The same row with label_only set (a task key that changes the labels only).
ParamSpec param_label_only(ParamSpec spec);
// The same row renamed from `stored_as` (see ParamSpec::stored_as).
ParamSpec param_renamed(ParamSpec spec, std::string stored_as);
// The key's spelling in stored configurations: stored_as if renamed, else name.
const std::string& param_stored_name(const ParamSpec& spec);

const char* param_type_name(ParamType type);
// A value as the user would write it: 16, 0.5, true, sphere, [0.001, 0.01], ["a", "b"].
std::string param_value_text(const ParamValue& value);

class Params {
 public:
  Params() = default;
  Params(std::string section, std::vector<ParamSpec> schema);

  // Set from a typed value (TOML). Ints are accepted for Real keys.
  void set(const std::string& key, const ParamValue& value);
  // Set from text (command line): parsed by the key's declared type. Lists are written
  // as "[a, b, c]" or "a,b,c".
  void set_text(const std::string& key, const std::string& text);

  // Keys are names or, for a renamed key, its stored spelling (ParamSpec::stored_as).
  bool has(const std::string& key) const;
  // The stored spelling of a key (param_stored_name of its row); `key` itself if unknown.
  std::string stored_key(const std::string& key) const;
  int64_t get_int(const std::string& key) const;
  double get_real(const std::string& key) const;
  bool get_bool(const std::string& key) const;
  const std::string& get_string(const std::string& key) const;
  const std::vector<double>& get_real_list(const std::string& key) const;
  const std::vector<std::string>& get_name_list(const std::string& key) const;

  const std::string& section() const { return section_; }
  const std::vector<ParamSpec>& schema() const { return schema_; }
  const std::vector<ParamValue>& values() const { return values_; }
  // {"N": 16, "q": 2, ...} in schema order, without execution settings (nor id_omit_default
  // keys at their default), renamed keys under their stored spelling; deterministic.
  std::string to_json() const;

 private:
  size_t index_of(const std::string& key) const;  // throws UserError with did-you-mean
  const ParamValue& value_of(const std::string& key, ParamType type) const;
  void check_value(const ParamSpec& spec, const ParamValue& value) const;

  std::string section_;
  std::vector<ParamSpec> schema_;
  std::vector<ParamValue> values_;
};

// One spec override item "section.KEY=VALUE", split at the first '=' and the first
// '.' before it; section is "" when the key has no dot. UserError "SET 'ITEM' must look
// like FORM" when there is no '=', or the section or key is empty (SET:
// front_option(FrontOption::kSet): --set on the command line, set= in Python).
struct ParamItem {
  std::string section, key, value;
};
ParamItem param_item_parse(const std::string& item, const std::string& form);

// Escape a string for JSON output (quotes included).
std::string json_quote(const std::string& text);

}  // namespace attn
