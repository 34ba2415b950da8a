// The serialized node record (NodeMeta::serialized) and torch's Argument union tags: key names,
// value kinds and the tag table, defined once for the JSON reader and writer.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json.
//
// The loader keeps, for every node it reads, what torch's format says and epgraph's Node does
// not: a small JSON object stored as text in NodeMeta::serialized, read back by the saver. Its
// members (all optional):
//   "args"/"kwargs": [{"name": s, "as": tag, "operator"?: s, "kind"?: int|null}, ...] the
//       file's inputs, in order (name, union tag, original operator spelling, ArgumentKind);
//   "hop": the file's is_hop_single_tensor_return; "has_name": true when the node had `name`;
//   "out": [{tag: value}, ...] the file's output layout; "extra": {...} fields of a newer schema;
//   "sym": {"table": "sym_int_values"|..., "value": {...}} / "custom_obj": class_fqn the value's
//       entry in the graph's tables; "graph": a nested graph (get_attr nodes of as_graph);
//   on placeholders: "as": the input's tag, "class_fqn", "value" and "constant_input_name";
//   "schema": true on records the writer derives for nodes made in C++ (never stored).

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "text.hpp"

namespace epgraph::json::detail {

// Keys of the node record (see above). `const char*` so they index ordered_json directly.
namespace record_key {
inline constexpr const char* args = "args";
inline constexpr const char* kwargs = "kwargs";
inline constexpr const char* name = "name";
inline constexpr const char* as = "as";
inline constexpr const char* op = "operator";
inline constexpr const char* kind = "kind";
inline constexpr const char* hop = "hop";
inline constexpr const char* has_name = "has_name";
inline constexpr const char* out = "out";
inline constexpr const char* extra = "extra";
inline constexpr const char* sym = "sym";
inline constexpr const char* table = "table";
inline constexpr const char* value = "value";
inline constexpr const char* custom_obj = "custom_obj";
inline constexpr const char* class_fqn = "class_fqn";
inline constexpr const char* graph = "graph";
inline constexpr const char* constant_input_name = "constant_input_name";
inline constexpr const char* schema = "schema";
}  // namespace record_key

// Keys of torch's serialized Node (torch/_export/serde/schema.py Node): the fields epgraph
// knows; any other is kept under record_key::extra.
namespace node_key {
inline constexpr const char* target = "target";
inline constexpr const char* inputs = "inputs";
inline constexpr const char* outputs = "outputs";
inline constexpr const char* metadata = "metadata";
inline constexpr const char* is_hop_single_tensor_return = "is_hop_single_tensor_return";
inline constexpr const char* name = "name";
}  // namespace node_key

// ArgumentKind of a serialized NamedArgument (torch/_export/serde/schema.py).
inline constexpr std::int64_t kPositional = 1;
inline constexpr std::int64_t kKeyword = 2;

// Whether `target` is a higher-order operator's (`torch.ops.higher_order.cond`, ...): its
// inputs and outputs follow other rules in both directions.
inline bool is_hop_target(std::string_view t) {
  return t.find("torch.ops.higher_order.") != std::string_view::npos;
}

// What a graph value is, as the writer names it in an argument (`as_tensor`, `as_sym_int`, ...).
enum class ValueKind : std::uint8_t { tensor, sym_int, sym_float, sym_bool, custom_obj, graph };

// The tags of torch's Argument union (schema.py Argument) epgraph reads and writes.
enum class ArgTag : std::uint8_t {
  unknown,  // not a tag of schema 8.20
  as_bool,
  as_bools,
  as_complex,
  as_custom_obj,
  as_device,
  as_float,
  as_float_lists,
  as_floats,
  as_graph,
  as_int,
  as_int_lists,
  as_ints,
  as_layout,
  as_memory_format,
  as_nested_tensors,
  as_none,
  as_operator,
  as_optional_tensor,
  as_optional_tensors,
  as_scalar_type,
  as_string,
  as_string_to_argument,
  as_strings,
  as_sym_bool,
  as_sym_bools,
  as_sym_float,
  as_sym_floats,
  as_sym_int,
  as_sym_ints,
  as_tensor,
  as_tensors,
};

// Tag name -> ArgTag, sorted by name (the enum's order after `unknown`).
inline constexpr std::array<std::pair<std::string_view, ArgTag>, 31> kArgTags = {{
    {"as_bool", ArgTag::as_bool},
    {"as_bools", ArgTag::as_bools},
    {"as_complex", ArgTag::as_complex},
    {"as_custom_obj", ArgTag::as_custom_obj},
    {"as_device", ArgTag::as_device},
    {"as_float", ArgTag::as_float},
    {"as_float_lists", ArgTag::as_float_lists},
    {"as_floats", ArgTag::as_floats},
    {"as_graph", ArgTag::as_graph},
    {"as_int", ArgTag::as_int},
    {"as_int_lists", ArgTag::as_int_lists},
    {"as_ints", ArgTag::as_ints},
    {"as_layout", ArgTag::as_layout},
    {"as_memory_format", ArgTag::as_memory_format},
    {"as_nested_tensors", ArgTag::as_nested_tensors},
    {"as_none", ArgTag::as_none},
    {"as_operator", ArgTag::as_operator},
    {"as_optional_tensor", ArgTag::as_optional_tensor},
    {"as_optional_tensors", ArgTag::as_optional_tensors},
    {"as_scalar_type", ArgTag::as_scalar_type},
    {"as_string", ArgTag::as_string},
    {"as_string_to_argument", ArgTag::as_string_to_argument},
    {"as_strings", ArgTag::as_strings},
    {"as_sym_bool", ArgTag::as_sym_bool},
    {"as_sym_bools", ArgTag::as_sym_bools},
    {"as_sym_float", ArgTag::as_sym_float},
    {"as_sym_floats", ArgTag::as_sym_floats},
    {"as_sym_int", ArgTag::as_sym_int},
    {"as_sym_ints", ArgTag::as_sym_ints},
    {"as_tensor", ArgTag::as_tensor},
    {"as_tensors", ArgTag::as_tensors},
}};

// kArgTags is sorted and follows the enum (arg_tag_name indexes it by the enum's value).
constexpr bool arg_tags_in_order() {
  for (std::size_t i = 0; i < kArgTags.size(); ++i) {
    if (static_cast<std::size_t>(kArgTags[i].second) != i + 1) return false;
    if (i > 0 && !(kArgTags[i - 1].first < kArgTags[i].first)) return false;
  }
  return true;
}
static_assert(arg_tags_in_order(), "kArgTags must be sorted by name and follow ArgTag");

// The ArgTag named `name`; ArgTag::unknown for any other string (the empty one included).
// O(log 31) string comparisons, no allocation.
[[nodiscard]] inline ArgTag arg_tag(std::string_view name) noexcept {
  const auto it = std::lower_bound(
      kArgTags.begin(), kArgTags.end(), name,
      [](const std::pair<std::string_view, ArgTag>& e, std::string_view n) { return e.first < n; });
  return it != kArgTags.end() && it->first == name ? it->second : ArgTag::unknown;
}

// The name of `tag` ("" for ArgTag::unknown). O(1).
[[nodiscard]] inline std::string_view arg_tag_name(ArgTag tag) noexcept {
  const auto i = static_cast<std::size_t>(tag);
  return i == 0 ? std::string_view() : kArgTags[i - 1].first;
}

// --- one input of a record's "args" / "kwargs": written by the reader, read by the writer ----

// Appends to `rec` (the text of an args/kwargs array, elements comma-separated) the record of
// one input: {"name": name, "as": tag, "operator"?: operator_text, "kind"?: kind}, where
// `operator_text` (empty: none) is an operator argument's spelling in the file and `kind` (null:
// absent) the file's ArgumentKind value, kept as it was (it may be null).
// `write_kind()` writes the ArgumentKind's value (called when `has_kind`).
template <class WriteKind>
void append_input_record_with(JsonText& rec, std::string_view name, std::string_view tag,
                              std::string_view operator_text, bool has_kind,
                              WriteKind&& write_kind) {
  if (!rec.buffer().empty()) rec.raw(',');
  rec.raw('{');
  rec.key(record_key::name);
  rec.string(name);
  rec.raw(',');
  rec.key(record_key::as);
  rec.string(tag);
  if (!operator_text.empty()) {
    rec.raw(',');
    rec.key(record_key::op);
    rec.string(operator_text);
  }
  if (has_kind) {
    rec.raw(',');
    rec.key(record_key::kind);
    write_kind();
  }
  rec.raw('}');
}

// The tag of an input record (`rec`, null for an input the file did not have: ArgTag::unknown).
[[nodiscard]] inline ArgTag input_record_tag(const ojson* rec) {
  return rec ? arg_tag((*rec)[record_key::as].get_ref<const std::string&>()) : ArgTag::unknown;
}

// The name of an input record ("" for none).
[[nodiscard]] inline std::string input_record_name(const ojson* rec) {
  return rec ? (*rec)[record_key::name].get<std::string>() : std::string();
}

}  // namespace epgraph::json::detail
