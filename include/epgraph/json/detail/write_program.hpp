// Writing an exported-program document (torch's ExportedProgramSerializer.serialize): the graph,
// the signature, the metadata and the fields kept opaque, and the file written all or nothing.
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

// Internal to epgraph::json (the writer).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "../../ir/graph.hpp"
#include "../../program/exported_program.hpp"
#include "../error.hpp"
#include "../format.hpp"
#include "checked_access.hpp"
#include "dispose.hpp"
#include "dom.hpp"
#include "opaque_keys.hpp"
#include "text.hpp"
#include "tree.hpp"
#include "write_graph.hpp"
#include "write_signature.hpp"

namespace epgraph::json::detail {

// The opaque fields of a program's metadata (ProgramMetadata::opaque: JSON text kept from the
// file it was loaded from) and the list of optional fields that file omitted (`json.absent`).
class OpaqueFields {
 public:
  // Throws nlohmann::json::parse_error when `json.absent` is malformed.
  explicit OpaqueFields(const ProgramMetadata& md) : md_(md) {
    for (const auto& [k, v] : md_.opaque) {
      if (k == "json.absent") {
        ojson list = parse_ordered(v);
        JsonDisposer dispose_list(list);
        absent_ = list.get<std::vector<std::string>>();
      }
    }
  }

  // Whether the file omitted the field at `key` (a dotted path).
  [[nodiscard]] bool absent(const std::string& key) const {
    return std::find(absent_.begin(), absent_.end(), key) != absent_.end();
  }

  // The kept value at `key`, null when there is none. Throws serialization_error "malformed
  // opaque JSON: ..." at `key` when its text is not JSON.
  [[nodiscard]] ojson get(const std::string& key) const {
    for (const auto& [k, v] : md_.opaque) {
      if (k != key) continue;
      try {
        return parse_ordered(v);
      } catch (const nlohmann::json::exception& e) {  // parse_error or out_of_range
        throw serialization_error(key, std::string("malformed opaque JSON: ") + e.what());
      }
    }
    return nullptr;
  }

  // get(key), or `fallback` when there is no kept value.
  [[nodiscard]] ojson get_or(const std::string& key, ojson fallback) const {
    ojson v = get(key);
    if (v.is_null()) return fallback;
    return v;
  }

  // Every kept key.
  [[nodiscard]] const std::vector<std::pair<std::string, std::string>>& all() const {
    return md_.opaque;
  }

 private:
  const ProgramMetadata& md_;
  std::vector<std::string> absent_;
};

// The members of graph_module after `graph` and `signature`: module_call_graph, metadata,
// treespec_namedtuple_fields (unless the file omitted them), then the unknown fields kept.
inline ojson graph_module_rest(const OpaqueFields& opaque) {
  Tree tree(object_with_room(16 + opaque.all().size()));  // known fields + unknown ones
  ojson& gm = *tree;
  gm["module_call_graph"] = opaque.get_or("graph_module.module_call_graph", ojson::array());
  for (const char* key : {"metadata", "treespec_namedtuple_fields"}) {
    const std::string full = std::string("graph_module.") + key;
    if (!opaque.absent(full)) gm[key] = opaque.get_or(full, ojson::object());
  }
  for (const auto& kv : opaque.all()) {  // unknown graph_module fields
    const std::string& k = kv.first;
    if (k.rfind("graph_module.", 0) != 0 || k.find('.', 13) != std::string::npos) continue;
    const std::string key = k.substr(13);
    if (key != "graph" && key != "signature" && !gm.contains(key)) gm[key] = opaque.get(k);
  }
  return tree.take();
}

// The members of the document after `graph_module`: opset_version, range_constraints,
// schema_version, verifiers, torch_version, guards_code (the last three unless the file omitted
// them), then the unknown top-level fields kept (legacy `dialect`, ...).
inline ojson document_rest(const ProgramMetadata& md, const OpaqueFields& opaque) {
  ojson doc = object_with_room(16 + md.opaque.size());
  JsonDisposer dispose_doc(doc);
  doc["opset_version"] = ojson::object();
  for (const auto& [k, v] : md.opset_version) doc["opset_version"][k] = v;  // copies numbers
  // A repeated symbol keeps its first place and takes the last bounds (rc[symbol] = ...).
  MemberList constraints;
  for (const auto& r : md.range_constraints) {
    Tree rc(object_of("min_val", nullptr, "max_val", nullptr));
    if (r.min_val) (*rc)["min_val"] = *r.min_val;
    if (r.max_val) (*rc)["max_val"] = *r.max_val;
    constraints.set(r.symbol, rc.take());
  }
  doc["range_constraints"] = constraints.take();
  // A file of a newer minor version keeps it (what it has beyond 8.20 was kept or refused on
  // load); anything else is written as 8.20.
  Tree version(opaque.get(std::string(kKeptSchemaVersion)));
  if (version->is_null()) *version = object_of("major", schema_major, "minor", schema_minor);
  doc["schema_version"] = version.take();
  if (!opaque.absent("verifiers")) doc["verifiers"] = md.verifiers;
  if (!opaque.absent("torch_version")) {
    doc["torch_version"] = md.torch_version.empty() ? std::string("<=2.4") : md.torch_version;
  }
  if (!opaque.absent("guards_code"))
    doc["guards_code"] = opaque.get_or("guards_code", ojson::array());
  for (const auto& kv : md.opaque) {
    const std::string& k = kv.first;
    if (k.find('.') == std::string::npos && k != "graph_module" && !doc.contains(k)) {
      doc[k] = opaque.get(k);
    }
  }
  dispose_doc.release();
  return doc;
}

// Appends the members of `obj` and the closing brace of an object whose first members are
// already in `out` (`}` alone when `obj` is empty).
inline void append_rest_of(const ojson& obj, JsonText& out) {
  if (obj.empty()) {
    out.raw('}');
    return;
  }
  std::string& text = out.buffer();
  const std::size_t brace = text.size();
  out.value(obj);
  text[brace] = ',';
}

// save_exported_program_to_string: the graph (nearly all of the text) and the signature are
// written straight to the text; the rest of graph_module and of the document are small
// ordered_json trees appended after them. Errors are thrown in the order of the document.
template <class Tensor>
std::string save_program(const ExportedProgram<Tensor>& ep) {
  // Two nested graphs under one target: torch's loader would register the last one read and
  // call it from both nodes (epgraph's loader refuses the file). Refused before writing.
  const std::vector<NestedGraphClash> clashes = nested_graph_clashes(ep.graph());
  if (!clashes.empty()) {
    throw serialization_error(
        "graph_module.graph.nodes",
        clashes.front().message() + ": torch's loader would call the last one read from both");
  }
  const OpaqueFields opaque(ep.metadata());
  std::string text;
  text.reserve(1024 * (ep.graph().size() + 1));
  JsonText out(text);
  // The document's first member is graph_module, whose first member is the graph.
  out.raw(std::string_view("{\"graph_module\":{\"graph\":"));
  GraphWriter(signature_values(ep), &ep.nested_graphs())
      .write_text(ep.graph(), out, !opaque.absent("graph_module.graph.custom_obj_values"),
                  !opaque.absent("graph_module.graph.sym_float_values"));
  write_signature(ep.graph_signature(), out);
  ojson gm = graph_module_rest(opaque);
  JsonDisposer dispose_gm(gm);
  ojson doc = document_rest(ep.metadata(), opaque);
  JsonDisposer dispose_doc(doc);
  append_rest_of(gm, out);
  append_rest_of(doc, out);
  return text;
}

// Writes `text` to `file` (a regular file or a new one) all or nothing: to a new temporary file
// in the same directory (".<name>.epgraph-tmp-<n>"), given the permissions of the file it
// replaces, then renamed over `file` (a symlink is followed: the file it points to is replaced,
// the link stays; a device or pipe such as /dev/stdout is written in place). On any
// failure the temporary file is removed and `file` is as it was: a full disk, a file size limit
// (RLIMIT_FSIZE) or `file` being the program's own source cannot leave half a record behind
// (torch's writer and a plain truncating write both can). Throws serialization_error "cannot
// write 'f.json'" (empty path), with the reason when the system gives one. O(text size).
inline void write_file_atomically(const std::filesystem::path& file, std::string_view text) {
  namespace fs = std::filesystem;
  const std::string shown = "cannot write '" + file.string() + "'";
  std::error_code ec;
  // A device, a pipe or a socket (e.g. /dev/stdout) cannot be replaced: written in place.
  const fs::file_status st = fs::status(file, ec);
  if (fs::exists(st) && !fs::is_regular_file(st) && !fs::is_directory(st)) {
    std::ofstream out(file, std::ios::binary);
    if (!out) throw serialization_error("", shown);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    if (!out.flush()) throw serialization_error("", shown + ": the write failed");
    return;
  }
  fs::path target = file;
  if (fs::is_symlink(file, ec)) {
    const fs::path resolved = fs::weakly_canonical(file, ec);
    if (!ec) target = resolved;
  }
  if (fs::is_directory(target, ec)) throw serialization_error("", shown + ": a directory");
  const fs::path dir = target.has_parent_path() ? target.parent_path() : fs::path(".");
  if (!fs::is_directory(dir, ec)) {
    throw serialization_error("", shown + ": directory '" + dir.string() + "' does not exist");
  }
  static std::atomic<unsigned> counter{0};
  const auto stamp =
      static_cast<unsigned long long>(std::chrono::steady_clock::now().time_since_epoch().count());
  fs::path tmp;
  for (int attempt = 0;; ++attempt) {
    tmp = dir / ("." + target.filename().string() + ".epgraph-tmp-" + std::to_string(stamp) + "-" +
                 std::to_string(counter++));
    if (!fs::exists(tmp, ec)) break;
    if (attempt > 100) throw serialization_error("", shown + ": no temporary file name is free");
  }
  struct Remove {
    const fs::path* path;
    bool armed = true;
    ~Remove() {
      std::error_code ignored;
      if (armed) fs::remove(*path, ignored);
    }
  } remove_tmp{&tmp};
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw serialization_error("", shown);
    out.write(text.data(), static_cast<std::streamsize>(text.size()));
    out.close();
    if (!out)
      throw serialization_error("", shown + ": the write failed (disk full or file too large?)");
  }
  const fs::file_status old = fs::status(target, ec);
  if (!ec && fs::exists(old)) fs::permissions(tmp, old.permissions(), ec);
  fs::rename(tmp, target, ec);
  if (ec) throw serialization_error("", shown + ": " + ec.message());
  remove_tmp.armed = false;
}

}  // namespace epgraph::json::detail
