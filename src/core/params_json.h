// Parameter values as JSON (nlohmann::json): the one conversion in each direction, used by
// the run-point codec (experiment/point_codec.h), saved models (models/model_io.h) and the
// spec fingerprint (experiment/spec.h). Params::to_json() stays the canonical text of run
// ids; these read it back and write values for other JSON documents.
#pragma once

#include <string>
#include <nlohmann/json.hpp>

#include "core/params.h"

namespace attn {

// bool, integer, real, string, or a list of reals or of names as a JSON array.
nlohmann::json param_value_json(const ParamValue& value);

// The ParamValue a JSON value holds (integers stay integers; Params::set widens them for
// Real keys; an array whose first item is a string is a list of names, [] a list of numbers).
// UserError "WHERE must be a list of numbers" / "WHERE has an unsupported JSON value ..."
// otherwise.
ParamValue param_value_from_json(const nlohmann::json& value, const std::string& where);

// Sets every key of a JSON object (as Params::to_json writes it) on `params`. UserError
// prefixed "WHERE: " when `object` is not an object, or for a key or value Params::set
// refuses.
void params_set_json(Params& params, const nlohmann::json& object, const std::string& where);

}  // namespace attn
