// Reading an exported-program document: its schema version, graph, signature and the fields
// kept as metadata (torch's ExportedProgramDeserializer.deserialize).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the reader).

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../ir/graph.hpp"
#include "../../program/exported_program.hpp"
#include "../../program/graph_signature.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "opaque_keys.hpp"
#include "parse.hpp"
#include "read_graph.hpp"
#include "read_signature.hpp"
#include "tree.hpp"

namespace epgraph::json::detail {

// Legacy files write module_call_graph arguments with every union member; keep one. The result
// is the caller's to dismantle (dispose.hpp); on an exception the partial copy is dismantled.
inline ojson strip_null_members(const ojson& j) {
  if (j.is_object()) {
    ojson out = ojson::object();
    JsonDisposer guard(out);
    // Reserved: a growing ordered_json object would copy its members and destroy the old ones.
    out.get_ref<ojson::object_t&>().reserve(j.size());
    for (auto it = j.begin(); it != j.end(); ++it) {
      if (it.value().is_null()) continue;
      ojson member = strip_null_members(it.value());
      JsonDisposer member_guard(member);
      out[it.key()] = std::move(member);
    }
    guard.release();
    return out;
  }
  if (j.is_array()) {
    ojson out = ojson::array();
    JsonDisposer guard(out);
    out.get_ref<ojson::array_t&>().reserve(j.size());
    for (const auto& x : j) {
      ojson element = strip_null_members(x);
      JsonDisposer element_guard(element);
      out.push_back(std::move(element));
    }
    guard.release();
    return out;
  }
  return j;
}

// A document's `schema_version`: {major, minor}, or the legacy integer form (then `legacy`).
struct SchemaVersion {
  std::int64_t major = 0;
  std::int64_t minor = 0;
  bool legacy = false;  // the integer form, or a major version below 7

  [[nodiscard]] bool newer_minor() const noexcept {
    return major == schema_major && minor > schema_minor;
  }
  [[nodiscard]] std::string text() const {
    return std::to_string(major) + "." + std::to_string(minor);
  }
};

// Reads and checks `schema_version`; a newer minor version is recorded in `md` under
// kKeptSchemaVersion (save writes it back). Throws serialization_error for a missing or mistyped
// version and "schema major version 9 is newer than the newest supported (8)".
inline SchemaVersion read_schema_version(const ojson& doc, ProgramMetadata& md) {
  const ojson& sv = field(doc, "", "schema_version");
  SchemaVersion v;
  if (sv.is_number_integer()) {
    v.legacy = true;
    v.major = get_int(sv, "schema_version");
  } else {
    v.major = get_int(field(sv, "schema_version", "major"), "schema_version.major");
    v.minor = get_int(field(sv, "schema_version", "minor"), "schema_version.minor");
  }
  if (v.major > schema_major) {
    throw serialization_error("schema_version", "schema major version " + std::to_string(v.major) +
                                                    " is newer than the newest supported (" +
                                                    std::to_string(schema_major) + ")");
  }
  v.legacy = v.legacy || v.major < 7;
  if (v.newer_minor()) md.opaque.emplace_back(kKeptSchemaVersion, sv.dump());
  return v;
}

template <class Tensor>
std::string save_program(const ExportedProgram<Tensor>& ep);  // serialize.hpp

// Throws serialization_error at the path of the first member of `in` that `out` lacks (`out` is
// what save writes for the program loaded from `in`). Entries of `tensor_values` are data, and
// save drops those naming no value: their absence is not reported. Arrays are compared
// element by element. `version` is the file's ("8.21"). O(size of `in`).
inline void check_fields_kept(const ojson& in, const ojson& out, const Path& path,
                              const std::string& version) {
  if (in.is_array() && out.is_array()) {
    for (std::size_t i = 0; i < in.size() && i < out.size(); ++i) {
      check_fields_kept(in[i], out[i], at_index(path, i), version);
    }
    return;
  }
  if (!in.is_object() || !out.is_object()) return;
  const bool data_keys = path.str().size() >= 13 &&
                         path.str().compare(path.str().size() - 13, 13, "tensor_values") == 0;
  for (auto it = in.begin(); it != in.end(); ++it) {
    const auto o = out.find(it.key());
    if (o != out.end()) {
      check_fields_kept(it.value(), *o, at_key(path, it.key()), version);
    } else if (!data_keys) {
      throw serialization_error(
          path, "field '" + it.key() + "' of schema " + version +
                    " is unknown to epgraph, which implements schema " +
                    std::to_string(schema_major) + "." + std::to_string(schema_minor) +
                    " and keeps unknown fields only on nodes, at the top level and in "
                    "graph_module: refusing the file rather than dropping the field");
    }
  }
}

// Forward compatibility (a file of schema 8.x, x > 20, which torch 2.13 loads ignoring what it
// does not know): checks that saving `ep`, loaded from `text`, keeps every field of the file;
// throws check_fields_kept's error otherwise. O(size of the text).
template <class Tensor>
void check_newer_minor_kept(const ExportedProgram<Tensor>& ep, std::string_view text,
                            const std::string& version) {
  ojson in = parse_ordered(text);
  JsonDisposer in_guard(in);
  ojson out = parse_ordered(save_program(ep));
  JsonDisposer out_guard(out);
  check_fields_kept(in, out, "", version);
}

// Keeps graph_module's fields other than graph and signature as opaque JSON text (a legacy
// file's without their null members) and notes the optional ones the file omits in `absent`.
inline void read_graph_module_rest(const ojson& gm, bool legacy, ProgramMetadata& md,
                                   std::vector<std::string>& absent) {
  for (auto it = gm.begin(); it != gm.end(); ++it) {
    if (it.key() == "graph" || it.key() == "signature") continue;
    if (legacy) {
      ojson v = strip_null_members(it.value());
      JsonDisposer v_guard(v);
      md.opaque.emplace_back("graph_module." + it.key(), v.dump());
    } else {
      md.opaque.emplace_back("graph_module." + it.key(), it.value().dump());
    }
  }
  for (const char* key : {"metadata", "treespec_namedtuple_fields"}) {
    if (gm.contains(key)) continue;
    if (legacy) {
      md.opaque.emplace_back(std::string("graph_module.") + key, "{}");  // schema default
    } else {
      absent.push_back(std::string("graph_module.") + key);
    }
  }
  if (!gm.contains("module_call_graph")) {
    throw serialization_error("graph_module", "missing required field 'module_call_graph'");
  }
}

// The document's opset_version and range_constraints.
inline void read_opsets_and_ranges(const ojson& doc, ProgramMetadata& md) {
  const ojson& ov = expect_object(field(doc, "", "opset_version"), "opset_version");
  for (auto it = ov.begin(); it != ov.end(); ++it) {
    md.opset_version.emplace_back(it.key(), get_int(it.value(), at_key("opset_version", it.key())));
  }
  const ojson& rc = expect_object(field(doc, "", "range_constraints"), "range_constraints");
  for (auto it = rc.begin(); it != rc.end(); ++it) {
    const std::string p = at_key("range_constraints", it.key());
    RangeConstraint r;
    r.symbol = it.key();
    const ojson& lo = field(it.value(), p, "min_val");
    const ojson& hi = field(it.value(), p, "max_val");
    // torch <= 2.6 wrote an unbounded end as -Infinity / Infinity (a float; torch 2.13 reads it
    // as -int_oo / int_oo and writes null).
    auto unbounded = [](const ojson& v, const char* inf) { return v.is_string() && v == inf; };
    if (!lo.is_null() && !unbounded(lo, "-Infinity")) r.min_val = get_int(lo, at_key(p, "min_val"));
    if (!hi.is_null() && !unbounded(hi, "Infinity")) r.max_val = get_int(hi, at_key(p, "max_val"));
    md.range_constraints.push_back(std::move(r));
  }
}

// The document's verifiers, torch_version, guards_code and unknown top-level fields (kept as
// opaque JSON text); the optional ones the file omits are noted in `absent`, which is then
// stored as the opaque field `json.absent`.
inline void read_document_rest(const ojson& doc, bool legacy, ProgramMetadata& md,
                               std::vector<std::string>& absent) {
  if (const ojson* v = opt_field(doc, "", "verifiers")) {
    const auto& arr = expect_array(*v, "verifiers");
    for (std::size_t i = 0; i < arr.size(); ++i) {
      md.verifiers.push_back(get_string(arr[i], at_index("verifiers", i)));
    }
  } else if (!legacy) {
    absent.emplace_back("verifiers");
  }
  if (const ojson* v = opt_field(doc, "", "torch_version")) {
    md.torch_version = get_string(*v, "torch_version");
  } else {
    md.torch_version = "<=2.4";  // schema default
    if (!legacy) absent.emplace_back("torch_version");
  }
  if (legacy && !doc.contains("guards_code")) md.opaque.emplace_back("guards_code", "[]");
  for (auto it = doc.begin(); it != doc.end(); ++it) {
    const std::string& k = it.key();
    if (k == "graph_module" || k == "opset_version" || k == "range_constraints" ||
        k == "schema_version" || k == "verifiers" || k == "torch_version") {
      continue;
    }
    md.opaque.emplace_back(k, it.value().dump());
  }
  if (!legacy && !doc.contains("guards_code")) absent.emplace_back("guards_code");
  if (!absent.empty()) {
    ojson a(absent);
    JsonDisposer a_guard(a);
    md.opaque.emplace_back("json.absent", a.dump());
  }
}

// load_exported_program_from_string with the text parsed by `backend` (the same program and the
// same errors with both; tests compare them).
// With `cache`, the parse uses (and leaves in it) the cache's parser instead of a new one.
template <class Tensor>
[[nodiscard]] ExportedProgram<Tensor> load_program(std::string_view json_text,
                                                   parser_backend backend,
                                                   ParserCache* cache = nullptr) {
  detail::ParsedDocument parsed;
#if EPGRAPH_JSON_HAS_SIMDJSON
  if (cache != nullptr) {
    if (!cache->feeder) cache->feeder = std::make_unique<SimdjsonFeeder>();
    parsed.feeder = cache->feeder.get();
  }
#else
  (void)cache;
#endif
  // JSON text must not start with a byte order mark (RFC 8259, 8.1); nlohmann skips one, and
  // torch's loader refuses it (json.loads), so a file with one would pass epgraph and fail torch
  // (found by a break test: `pt2_edit validate` said OK, `copy` passed it on).
  if (json_text.substr(0, 3) == "\xEF\xBB\xBF") {
    throw serialization_error("",
                              "the text starts with a UTF-8 byte order mark, which "
                              "torch.export.load refuses (json.loads: \"Unexpected UTF-8 "
                              "BOM\"); JSON text must not start with one (RFC 8259)");
  }
  detail::parse_document(json_text, parsed, backend);
  ojson& doc = parsed.doc;
  detail::expect_object(doc, "");
  ProgramMetadata md;
  std::vector<std::string> absent;
  const detail::SchemaVersion version = detail::read_schema_version(doc, md);
  const bool legacy = version.legacy;

  const ojson& gm = field(doc, "", "graph_module");
  detail::expect_object(gm, "graph_module");
  const ojson& sig = field(gm, "graph_module", "signature");
  const std::string isp = "graph_module.signature.input_specs";
  const std::string osp = "graph_module.signature.output_specs";
  const ojson& in_specs =
      detail::expect_array(field(sig, "graph_module.signature", "input_specs"), isp);
  const ojson& out_specs =
      detail::expect_array(field(sig, "graph_module.signature", "output_specs"), osp);

  auto graph = std::make_unique<Graph>();
  // Ended (schema checks back on) before the program takes the graph: a reader outliving the
  // program it filled would touch a freed graph when the last check below throws.
  std::optional<detail::GraphReader> reader(std::in_place, *graph, legacy);
  // The graph's node entries are freed as they are read (read_consuming); nothing below reads
  // them.
  (void)field(gm, "graph_module", "graph");              // throws when absent
  ojson& jg = *doc.find("graph_module")->find("graph");  // the value field() found
#if EPGRAPH_JSON_HAS_SIMDJSON
  if (parsed.nodes != nullptr) reader->take_nodes_from(*parsed.feeder, *parsed.nodes);
#endif
  reader->read_consuming(jg, "graph_module.graph", detail::constant_input_names(in_specs, isp),
                         parsed.tensor_values ? &*parsed.tensor_values : nullptr);
  for (const char* key : {"custom_obj_values", "sym_float_values"}) {
    if (!jg.contains(key) && !legacy) absent.push_back(std::string("graph_module.graph.") + key);
  }
  ExportGraphSignature signature =
      detail::read_signature(in_specs, isp, out_specs, osp, reader->values(), legacy);
  detail::read_graph_module_rest(gm, legacy, md, absent);
  detail::read_opsets_and_ranges(doc, md);
  detail::read_document_rest(doc, legacy, md, absent);
  reader.reset();
  ExportedProgram<Tensor> ep(std::move(graph), std::move(signature), {}, {}, std::move(md));
  if (version.newer_minor()) detail::check_newer_minor_kept(ep, parsed.text, version.text());
  return ep;
}

}  // namespace epgraph::json::detail
