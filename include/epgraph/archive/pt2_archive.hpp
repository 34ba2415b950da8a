// Loading and saving .pt2 / .ep archives (torch.export.load / torch.export.save).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

/// Loading and saving whole torch.export archives (.pt2 / .ep zip files) — torch.export.load and
/// torch.export.save (torch/export/__init__.py, torch/export/pt2_archive/_package.py).

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <deque>
#include <filesystem>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "../detail/strings.hpp"
#include "../ir/tensor.hpp"
#include "../json/deserialize.hpp"
#include "../json/detail/dispose.hpp"
#include "../json/detail/dom.hpp"
#include "../json/detail/tree.hpp"
#include "../json/error.hpp"
#include "../json/serialize.hpp"
#include "../json/tensor_meta.hpp"
#include "../program/exported_program.hpp"
#include "../program/graph_signature.hpp"
#include "archive_error.hpp"
#include "load.hpp"
#include "save.hpp"
#include "tensor_data.hpp"
#include "zip.hpp"

namespace epgraph::archive {

/// Largest tensor, in bytes, that load_archive materializes from a payload whose layout repeats
/// storage elements (a stride of 0, overlapping strides), i.e. that is bigger than its entry:
/// 256 MiB. A payload whose layout touches each stored element at most once is never bigger
/// than its entry and has no limit beyond the entry's size.
inline constexpr std::uint64_t max_expanded_tensor_bytes = std::uint64_t{256} << 20;

namespace detail {

// Entry names (torch/csrc/export/pt2_archive_constants.h; torch/export/__init__.py).
inline constexpr std::string_view kLegacyProgram = "serialized_exported_program.json";
inline constexpr std::string_view kArchiveFormat = "archive_format";
inline constexpr std::string_view kArchiveVersion = "archive_version";
inline constexpr std::string_view kByteorder = "byteorder";
inline constexpr std::string_view kModelsDir = "models/";
inline constexpr std::string_view kWeightsDir = "data/weights/";
inline constexpr std::string_view kConstantsDir = "data/constants/";
inline constexpr std::string_view kSampleInputsDir = "data/sample_inputs/";
inline constexpr std::string_view kWeightPrefix = "weight_";
inline constexpr std::string_view kTensorPrefix = "tensor_";
inline constexpr std::string_view kCustomObjPrefix = "custom_obj_";

using ordered_json = nlohmann::ordered_json;

using epgraph::detail::ends_with;  // detail/strings.hpp
using epgraph::detail::starts_with;

inline std::string to_text(const std::vector<std::byte>& bytes) {
  return std::string(reinterpret_cast<const char*>(bytes.data()), bytes.size());
}
inline std::shared_ptr<const std::vector<std::byte>> to_bytes(std::string_view text) {
  auto out = std::make_shared<std::vector<std::byte>>(text.size());
  std::transform(text.begin(), text.end(), out->begin(),
                 [](char c) { return static_cast<std::byte>(c); });
  return out;
}

inline std::string json_key_path(std::string_view fqn) {
  return "config['" + std::string(fqn) + "']";
}

// One entry of a weights / constants config (torch schema `PayloadMeta`).
struct payload_entry {
  std::string fqn;
  std::string path_name;
  bool is_param = false;
  bool use_pickle = false;
  std::optional<TensorMeta> meta;
  ordered_json raw;  // the entry as read, for verbatim pass-through

  payload_entry() = default;
  payload_entry(const payload_entry&) = default;
  payload_entry(payload_entry&&) noexcept = default;
  payload_entry& operator=(const payload_entry&) = default;
  payload_entry& operator=(payload_entry&&) noexcept = default;
  // nlohmann's destructor allocates for a non-empty tree (see json/dispose.hpp): dismantle it.
  ~payload_entry() { json::detail::dismantle(raw); }
};

// Parses `{"config": {"<fqn>": {"path_name", "is_param", "use_pickle", "tensor_meta"}}}`.
inline std::vector<payload_entry> parse_payload_config(const std::string& archive,
                                                       const std::string& entry,
                                                       const std::vector<std::byte>& bytes) {
  // Parsed with epgraph's exact-size builder and dismantled before destruction, so that an
  // allocation failure anywhere throws std::bad_alloc instead of terminating (json/dispose.hpp);
  // nesting is checked first because dismantling recurses.
  const std::string text = to_text(bytes);
  try {
    json::detail::check_nesting(text);
    json::detail::check_no_nul(text);  // a raw NUL would end nlohmann's input early
  } catch (const json::serialization_error& e) {
    throw archive_error(archive, entry, e.what());
  }
  ordered_json doc;
  json::detail::JsonDisposer dispose_doc(doc);
  try {
    try {
      doc = json::detail::parse_ordered(text);
    } catch (const nlohmann::json::parse_error&) {
      // torch <= 2.6 wrote non-finite floats as bare Infinity / -Infinity / NaN (see
      // quote_bare_nonfinite); anything else is reported as the first parse found it.
      const std::optional<std::string> quoted = json::detail::quote_bare_nonfinite(text);
      if (!quoted) throw;
      doc = json::detail::parse_ordered(*quoted);
    }
  } catch (const nlohmann::json::parse_error& e) {
    throw archive_error(archive, entry,
                        "invalid JSON (parse error at byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {  // out_of_range: a number too large
    throw archive_error(archive, entry, std::string("invalid JSON (") + e.what() + ")");
  }
  if (!doc.is_object() || !doc.contains("config") || !doc["config"].is_object()) {
    throw archive_error(archive, entry, "config: expected an object");
  }
  std::vector<payload_entry> out;
  for (const auto& item : doc["config"].items()) {
    const std::string& fqn = item.key();
    const ordered_json& value = item.value();
    const std::string where = json_key_path(fqn);
    if (!value.is_object()) throw archive_error(archive, entry, where + ": expected an object");
    payload_entry p;
    p.fqn = fqn;
    p.raw = value;
    auto field = [&](const char* name) -> const ordered_json& {
      if (!value.contains(name)) {
        throw archive_error(archive, entry, where + "." + name + ": missing");
      }
      return value[name];
    };
    const ordered_json& path_name = field("path_name");
    if (!path_name.is_string() || path_name.get<std::string>().empty()) {
      throw archive_error(archive, entry, where + ".path_name: expected a non-empty string");
    }
    p.path_name = path_name.get<std::string>();
    const ordered_json& is_param = field("is_param");
    const ordered_json& use_pickle = field("use_pickle");
    if (!is_param.is_boolean()) {
      throw archive_error(archive, entry, where + ".is_param: expected a boolean");
    }
    if (!use_pickle.is_boolean()) {
      throw archive_error(archive, entry, where + ".use_pickle: expected a boolean");
    }
    p.is_param = is_param.get<bool>();
    p.use_pickle = use_pickle.get<bool>();
    if (value.contains("tensor_meta") && !value["tensor_meta"].is_null()) {
      try {
        p.meta = json::tensor_meta_from_json(value["tensor_meta"], where + ".tensor_meta");
      } catch (const json::serialization_error& e) {
        throw archive_error(archive, entry, e.what());
      }
    }
    out.push_back(std::move(p));
  }
  return out;
}

inline std::string shape_text(const std::vector<std::int64_t>& v) {
  std::string s = "[";
  for (std::size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + std::to_string(v[i]);
  return s + "]";
}

// The concrete value of a SymInt, or nothing when symbolic.
inline std::optional<std::int64_t> concrete(const SymInt& s) {
  if (const auto* v = std::get_if<std::int64_t>(&s)) return *v;
  return std::nullopt;
}

// Reads a raw (use_pickle false) payload: `bytes` is the untyped storage, `meta` says which
// elements the tensor views (torch: as_strided(storage, sizes, strides, storage_offset)).
// Returns the tensor's elements, contiguous. `what` is "weight 'fqn'" / "constant 'fqn'".
struct gathered {
  dtype type;
  std::vector<std::int64_t> sizes;
  std::vector<std::byte> bytes;
};
// Checks a raw payload's layout against its entry's size (`storage_size` bytes, from the zip
// directory: nothing is read) and returns the concrete layout. Throws the archive_error texts
// load_archive documents.
struct checked_layout {
  std::vector<std::int64_t> sizes, strides;
  std::uint64_t offset = 0;
  std::size_t esize = 0;
  unsigned long long numel = 0;
  bool empty = false;
};
// The concrete sizes, strides and storage offset of `meta` (first step of check_payload).
// Throws archive_error when one is symbolic or negative, or the counts differ.
inline checked_layout concrete_layout(const std::string& archive, const std::string& entry,
                                      const std::string& what, const TensorMeta& meta) {
  checked_layout out;
  for (const auto& s : meta.sizes) {
    auto v = concrete(s);
    if (!v || *v < 0)
      throw archive_error(archive, entry, what + " has a symbolic or negative size");
    out.sizes.push_back(*v);
  }
  for (const auto& s : meta.strides) {
    auto v = concrete(s);
    if (!v || *v < 0) {
      throw archive_error(archive, entry, what + " has a symbolic or negative stride");
    }
    out.strides.push_back(*v);
  }
  const auto offset = concrete(meta.storage_offset);
  if (!offset || *offset < 0) {
    throw archive_error(archive, entry, what + " has a symbolic or negative storage_offset");
  }
  if (out.sizes.size() != out.strides.size()) {
    throw archive_error(archive, entry,
                        what + " has " + std::to_string(out.sizes.size()) + " sizes but " +
                            std::to_string(out.strides.size()) + " strides");
  }
  out.offset = static_cast<std::uint64_t>(*offset);
  return out;
}

inline checked_layout check_payload(const std::string& archive, const std::string& entry,
                                    const std::string& what, const TensorMeta& meta,
                                    std::uint64_t storage_size) {
  const std::size_t esize = element_size(meta.dtype);
  if (esize == 0) {
    throw archive_error(archive, entry,
                        what + " has dtype " + std::to_string(static_cast<int>(meta.dtype)) +
                            " of unknown element size");
  }
  checked_layout out = concrete_layout(archive, entry, what, meta);
  const std::vector<std::int64_t>& sizes = out.sizes;
  const std::vector<std::int64_t>& strides = out.strides;
  const std::string layout = std::string(dtype_name(meta.dtype)) + ", sizes " + shape_text(sizes) +
                             ", strides " + shape_text(strides) + ", storage_offset " +
                             std::to_string(out.offset);
  if (storage_size % esize != 0) {
    throw archive_error(archive, entry,
                        what + " (" + layout + "): the entry has " + std::to_string(storage_size) +
                            " bytes, not a multiple of the element size " + std::to_string(esize));
  }
  // Highest element index touched, with overflow checks; numel 0 touches nothing.
  const auto kMax = static_cast<unsigned long long>(std::numeric_limits<std::int64_t>::max());
  unsigned long long numel = 1, last = static_cast<unsigned long long>(out.offset);
  bool empty = false, too_large = false;
  for (std::size_t d = 0; d < sizes.size(); ++d) {
    const auto n = static_cast<unsigned long long>(sizes[d]);
    const auto st = static_cast<unsigned long long>(strides[d]);
    if (n == 0) empty = true;
    if (n != 0 && numel > kMax / n) too_large = true;
    if (!too_large) numel *= n;
    if (n > 0 && st > 0 && (n - 1) > (kMax - last) / st) too_large = true;
    if (!too_large && n > 0) last += (n - 1) * st;
  }
  if (too_large) throw archive_error(archive, entry, what + " (" + layout + ") is too large");
  const unsigned long long need = empty ? 0ULL : (last + 1) * esize;
  if (!empty && (last + 1) > kMax / esize) {
    throw archive_error(archive, entry, what + " (" + layout + ") is too large");
  }
  if (storage_size < need) {
    throw archive_error(archive, entry,
                        what + " (" + layout + ") needs " + std::to_string(need) +
                            " bytes but the entry has " + std::to_string(storage_size));
  }
  // numel * esize can exceed the entry only when the layout repeats storage elements (a stride
  // of 0, overlapping strides); that expansion is checked for overflow and capped.
  if (!empty && numel > kMax / esize) {
    throw archive_error(archive, entry, what + " (" + layout + ") is too large");
  }
  if (!empty && numel * esize > storage_size && numel * esize > max_expanded_tensor_bytes) {
    throw archive_error(archive, entry,
                        what + " (" + layout + ") would expand to " +
                            std::to_string(numel * esize) + " bytes, more than the limit of " +
                            std::to_string(max_expanded_tensor_bytes) +
                            " bytes for a layout that repeats storage elements");
  }
  out.esize = esize;
  out.numel = numel;
  out.empty = empty;
  return out;
}

inline gathered gather_payload(const std::string& archive, const std::string& entry,
                               const std::string& what, const TensorMeta& meta,
                               std::vector<std::byte> storage) {
  checked_layout c = check_payload(archive, entry, what, meta, storage.size());
  const std::vector<std::int64_t>& sizes = c.sizes;
  const std::vector<std::int64_t>& strides = c.strides;
  const std::size_t esize = c.esize;
  const unsigned long long numel = c.numel;
  const bool empty = c.empty;
  const auto offset = std::optional<std::uint64_t>(c.offset);
  gathered out{meta.dtype, sizes, {}};
  if (empty) return out;
  // Fast path: the storage is exactly the contiguous tensor.
  bool contiguous = true;
  {
    unsigned long long expect = 1;
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (sizes[d] != 1 && static_cast<unsigned long long>(strides[d]) != expect) {
        contiguous = false;
      }
      expect *= static_cast<unsigned long long>(sizes[d]);
    }
  }
  if (contiguous && *offset == 0 && storage.size() == numel * esize) {
    out.bytes = std::move(storage);
    return out;
  }
  out.bytes.resize(static_cast<std::size_t>(numel * esize));
  std::vector<std::int64_t> index(sizes.size(), 0);
  for (unsigned long long i = 0; i < numel; ++i) {
    unsigned long long element = static_cast<unsigned long long>(*offset);
    for (std::size_t d = 0; d < sizes.size(); ++d) {
      element +=
          static_cast<unsigned long long>(index[d]) * static_cast<unsigned long long>(strides[d]);
    }
    std::copy_n(storage.begin() + static_cast<std::ptrdiff_t>(element * esize), esize,
                out.bytes.begin() + static_cast<std::ptrdiff_t>(i * esize));
    for (std::size_t d = sizes.size(); d-- > 0;) {
      if (++index[d] < sizes[d]) break;
      index[d] = 0;
    }
  }
  return out;
}

inline std::vector<std::int64_t> contiguous_strides_of(const std::vector<std::int64_t>& sizes) {
  std::vector<std::int64_t> strides(sizes.size(), 1);
  for (std::size_t d = sizes.size(); d-- > 1;) {
    // Unsigned: the sizes of an empty tensor may be huge; wrap-around instead of undefined
    // behaviour (such strides are never used to address data).
    strides[d - 1] =
        static_cast<std::int64_t>(static_cast<std::uint64_t>(strides[d]) *
                                  static_cast<std::uint64_t>(std::max<std::int64_t>(sizes[d], 1)));
  }
  return strides;
}

// The concrete layout of a raw payload's view (torch's as_strided arguments), or nothing when a
// size, stride or offset is symbolic or negative, the dtype has no known element size, or the
// byte counts overflow.
struct payload_layout {
  std::vector<std::int64_t> sizes, strides;
  std::uint64_t offset = 0;
  std::size_t esize = 0;
  std::uint64_t numel = 0;
  std::uint64_t extent = 0;  // bytes of storage the view reaches (0 when it is empty)
};
inline std::optional<payload_layout> layout_of(const TensorMeta& meta) {
  payload_layout l;
  l.esize = element_size(meta.dtype);
  if (l.esize == 0 || meta.sizes.size() != meta.strides.size()) return std::nullopt;
  for (std::size_t d = 0; d < meta.sizes.size(); ++d) {
    const auto n = concrete(meta.sizes[d]);
    const auto st = concrete(meta.strides[d]);
    if (!n || !st || *n < 0 || *st < 0) return std::nullopt;
    l.sizes.push_back(*n);
    l.strides.push_back(*st);
  }
  const auto offset = concrete(meta.storage_offset);
  if (!offset || *offset < 0) return std::nullopt;
  l.offset = static_cast<std::uint64_t>(*offset);
  const auto kMax = static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max());
  std::uint64_t numel = 1, last = l.offset;
  for (std::size_t d = 0; d < l.sizes.size(); ++d) {
    const auto n = static_cast<std::uint64_t>(l.sizes[d]);
    const auto st = static_cast<std::uint64_t>(l.strides[d]);
    if (n == 0) return l;  // empty: numel and extent 0
    if (numel > kMax / n || (st != 0 && (n - 1) > (kMax - last) / st)) return std::nullopt;
    numel *= n;
    last += (n - 1) * st;
  }
  if (last + 1 > kMax / l.esize || numel > kMax / l.esize) return std::nullopt;
  l.numel = numel;
  l.extent = (last + 1) * l.esize;
  return l;
}

// Whether the view's elements are one contiguous run of storage (row-major, sizes-1 dims ignored).
inline bool is_contiguous_view(const payload_layout& l) noexcept {
  std::uint64_t expect = 1;
  for (std::size_t d = l.sizes.size(); d-- > 0;) {
    if (l.sizes[d] != 1 && static_cast<std::uint64_t>(l.strides[d]) != expect) return false;
    expect *= static_cast<std::uint64_t>(l.sizes[d]);
  }
  return true;
}

// Calls f(i, k) for the i-th element of the view (row-major), stored at storage element k; a
// contiguous view is one call f(0, offset) covering all numel elements (`run` is set to true).
template <class F>
void for_each_view_element(const payload_layout& l, F&& f, bool* run = nullptr) {
  if (run != nullptr) {
    *run = is_contiguous_view(l);
    if (*run) {
      if (l.numel != 0) f(0, l.offset);
      return;
    }
  }
  std::vector<std::int64_t> index(l.sizes.size(), 0);
  for (std::uint64_t i = 0; i < l.numel; ++i) {
    std::uint64_t k = l.offset;
    for (std::size_t d = 0; d < l.sizes.size(); ++d) {
      k += static_cast<std::uint64_t>(index[d]) * static_cast<std::uint64_t>(l.strides[d]);
    }
    f(i, k);
    for (std::size_t d = l.sizes.size(); d-- > 0;) {
      if (++index[d] < l.sizes[d]) break;
      index[d] = 0;
    }
  }
}

// Rebuilds one storage file from the tensors viewing it: `views` pairs each tensor's layout (from
// its config entry) with its contiguous bytes. Returns the storage (bytes no view reaches are
// zero), or nothing when two views disagree about a shared element.
inline std::optional<std::vector<std::byte>> rebuild_storage(
    const std::vector<std::pair<payload_layout, const std::vector<std::byte>*>>& views) {
  std::uint64_t size = 0;
  for (const auto& v : views) size = std::max(size, v.first.extent);
  if (size != static_cast<std::size_t>(size)) return std::nullopt;
  std::vector<std::byte> storage(static_cast<std::size_t>(size));
  for (const auto& view : views) {
    const std::vector<std::byte>& bytes = *view.second;
    const std::size_t e = view.first.esize;
    bool run = false;
    for_each_view_element(
        view.first,
        [&](std::uint64_t i, std::uint64_t k) {
          const std::uint64_t n = run ? view.first.numel * e : e;
          std::copy_n(bytes.begin() + static_cast<std::ptrdiff_t>(i * e), n,
                      storage.begin() + static_cast<std::ptrdiff_t>(k * e));
        },
        &run);
  }
  for (const auto& view : views) {  // overlapping views must agree
    const std::vector<std::byte>& bytes = *view.second;
    const std::size_t e = view.first.esize;
    bool same = true, run = false;
    for_each_view_element(
        view.first,
        [&](std::uint64_t i, std::uint64_t k) {
          const std::uint64_t n = run ? view.first.numel * e : e;
          same = same && std::equal(bytes.begin() + static_cast<std::ptrdiff_t>(i * e),
                                    bytes.begin() + static_cast<std::ptrdiff_t>(i * e + n),
                                    storage.begin() + static_cast<std::ptrdiff_t>(k * e));
        },
        &run);
    if (!same) return std::nullopt;
  }
  return storage;
}

// The names of one model's records in an archive.
struct model_paths {
  std::string program;           // models/<name>.json or serialized_exported_program.json
  std::string weights_dir;       // <prefix>data/weights/
  std::string weights_config;    // <prefix>data/weights/<name>_weights_config.json
  std::string legacy_weights;    // <prefix>data/weights/<name>.pt
  std::string constants_dir;     // <prefix>data/constants/
  std::string constants_config;  // <prefix>data/constants/<name>_constants_config.json
  std::string legacy_constants;  // <prefix>data/constants/<name>.pt
};

inline model_paths paths_of(const ArchiveInfo& info) {
  model_paths p;
  const std::string model = info.layout == "legacy" ? "model" : info.model_name;
  p.program = info.layout == "legacy" ? std::string(kLegacyProgram)
                                      : info.prefix + std::string(kModelsDir) + model + ".json";
  p.weights_dir = info.prefix + std::string(kWeightsDir);
  p.weights_config = p.weights_dir + model + "_weights_config.json";
  p.legacy_weights = p.weights_dir + model + ".pt";
  p.constants_dir = info.prefix + std::string(kConstantsDir);
  p.constants_config = p.constants_dir + model + "_constants_config.json";
  p.legacy_constants = p.constants_dir + model + ".pt";
  return p;
}

inline std::string archive_text(const zip_reader& zip, std::size_t index) {
  return to_text(zip.read(index));
}

// The program names of a current-layout archive: `<name>` of every `<prefix>models/<name>.json`
// among `entries`, in the entries' order. O(number of entries).
inline std::vector<std::string> model_names_in(const std::vector<std::string>& entries,
                                               const std::string& prefix) {
  std::vector<std::string> models;
  const std::string models_dir = prefix + std::string(kModelsDir);
  for (const auto& name : entries) {
    if (starts_with(name, models_dir) && ends_with(name, ".json") &&
        name.find('/', models_dir.size()) == std::string::npos) {
      models.push_back(name.substr(models_dir.size(), name.size() - models_dir.size() - 5));
    }
  }
  return models;
}

inline std::string comma_list(const std::vector<std::string>& items) {
  std::string list;
  for (const auto& m : items) list += (list.empty() ? "" : ", ") + m;
  return list;
}

// The program to load among `models` (non-empty): `requested` when given (it must be there);
// otherwise the only one, or `model` (the one torch.export.load returns) when there are several.
// Throws archive_error naming `archive` and the programs it holds.
inline std::string choose_model(const std::string& archive, const std::vector<std::string>& models,
                                std::string_view requested) {
  if (!requested.empty()) {
    if (std::find(models.begin(), models.end(), requested) == models.end()) {
      throw archive_error(archive, "",
                          "no program '" + std::string(requested) + "' (the archive holds " +
                              comma_list(models) + ")");
    }
    return std::string(requested);
  }
  if (models.size() == 1) return models.front();
  if (std::find(models.begin(), models.end(), "model") != models.end()) return "model";
  throw archive_error(archive, "",
                      "holds " + std::to_string(models.size()) + " programs (" +
                          comma_list(models) +
                          ") and none is named 'model' (the one torch.export.load loads): "
                          "name the program to load");
}

// Checks the records that say which format the archive has (archive_format, archive_version,
// byteorder) and returns the root folder (prefix) of a current-layout archive.
inline std::string check_pt2_format(const zip_reader& zip) {
  std::optional<std::size_t> format;
  std::string prefix;
  for (std::size_t i = 0; i < zip.entries().size(); ++i) {
    const std::string& name = zip.entries()[i].name;
    if (!ends_with(name, kArchiveFormat)) continue;
    const std::string p = name.substr(0, name.size() - kArchiveFormat.size());
    if (p.empty() || (p.back() == '/' && p.find('/') == p.size() - 1)) {
      format = i;
      prefix = p;
      break;
    }
  }
  if (!format) {
    throw archive_error(zip.path(), "",
                        "neither a PT2 archive (no archive_format entry) nor a legacy "
                        "torch.export archive (no serialized_exported_program.json entry)");
  }
  const std::string format_text = archive_text(zip, *format);
  if (format_text != "pt2") {
    throw archive_error(zip.path(), zip.entries()[*format].name,
                        "expected 'pt2', found '" + format_text + "'");
  }
  if (auto v = zip.find(prefix + std::string(kArchiveVersion))) {
    const std::string version = archive_text(zip, *v);
    if (version != "0") {
      throw archive_error(
          zip.path(), zip.entries()[*v].name,
          "unsupported archive version '" + version + "' (epgraph reads version 0)");
    }
  }
  if (auto b = zip.find(prefix + std::string(kByteorder))) {
    const std::string order = archive_text(zip, *b);
    if (order != "little") {
      throw archive_error(
          zip.path(), zip.entries()[*b].name,
          "unsupported byte order '" + order + "' (epgraph reads little-endian archives only)");
    }
  }
  return prefix;
}

// Finds the layout, root folder and program of the archive; `requested` names the program to
// load ("" for the default, see choose_model). A legacy archive holds one program, `model`.
inline ArchiveInfo detect_layout(const zip_reader& zip, std::string_view requested = {}) {
  ArchiveInfo info;
  for (const auto& e : zip.entries()) info.entry_order.push_back(e.name);
  if (zip.find(kLegacyProgram)) {
    if (!requested.empty() && requested != "model") {
      throw archive_error(zip.path(), "",
                          "no program '" + std::string(requested) +
                              "' (a legacy archive holds one program, model)");
    }
    info.layout = "legacy";
    return info;
  }
  info.prefix = check_pt2_format(zip);
  info.layout = "pt2";
  const std::vector<std::string> models = model_names_in(info.entry_order, info.prefix);
  if (models.empty()) {
    throw archive_error(
        zip.path(), "",
        "no model (no entry " + info.prefix + std::string(kModelsDir) + "<name>.json)");
  }
  info.model_name = choose_model(zip.path(), models, requested);
  return info;
}

// The payload files (`<dir><path_name>`) named by the weights and constants configs of the
// programs of a current-layout archive other than info.model_name. They belong to those
// programs: loading never moves them out of the pass-through records and saving never drops,
// rewrites or reuses them. `read(entry)` returns the entry's bytes or nothing when absent.
// Throws what parse_payload_config throws. O(size of those configs).
template <class Read>
std::set<std::string> other_programs_files(const std::string& archive, const ArchiveInfo& info,
                                           Read&& read) {
  std::set<std::string> files;
  if (info.layout != "pt2") return files;
  for (const std::string& m : model_names_in(info.entry_order, info.prefix)) {
    if (m == info.model_name) continue;
    ArchiveInfo other;
    other.layout = info.layout;
    other.prefix = info.prefix;
    other.model_name = m;
    const model_paths p = paths_of(other);
    for (const auto& [config, dir] : {std::pair{p.weights_config, p.weights_dir},
                                      std::pair{p.constants_config, p.constants_dir}}) {
      const std::optional<std::vector<std::byte>> bytes = read(config);
      if (!bytes) continue;
      for (const auto& e : parse_payload_config(archive, config, *bytes)) {
        files.insert(dir + e.path_name);
      }
    }
  }
  return files;
}

// The class of the custom object `fqn` according to the signature ("" when unknown).
inline std::string custom_obj_class(const ExportGraphSignature& sig, const std::string& fqn) {
  for (const auto& s : sig.input_specs) {
    if (s.kind() == InputKind::CUSTOM_OBJ && s.target() == fqn) {
      if (const auto* a = std::get_if<CustomObjArgument>(&s.arg())) return a->class_fqn;
    }
  }
  return "";
}

inline bool is_parameter(const ExportGraphSignature& sig, const std::string& fqn) {
  for (const auto& s : sig.input_specs) {
    if (s.kind() == InputKind::PARAMETER && s.target() == fqn) return true;
  }
  return false;
}

// Which config entries epgraph loads (raw tensors, custom objects) and which it passes through.
inline bool loads_payload(const payload_entry& p, bool constants) {
  if (!constants) return !p.use_pickle;
  if (starts_with(p.path_name, kTensorPrefix)) return !p.use_pickle;
  return starts_with(p.path_name, kCustomObjPrefix);
}

// The bytes of one raw payload tensor, read from its archive entry when first needed: the entry
// is read (CRC-checked) and the view its config entry describes is gathered contiguous. Holds the
// archive open (zip_reader keeps a descriptor), so the bytes stay those of the file that was
// loaded even when another file is renamed over its path; a file rewritten in place is refused.
class archive_tensor_source final : public tensor_source {
 public:
  archive_tensor_source(std::shared_ptr<const zip_reader> zip, std::size_t index, std::string what,
                        TensorMeta meta)
      : zip_(std::move(zip)), index_(index), what_(std::move(what)), meta_(std::move(meta)) {}

  // Throws archive_error "<file>: <entry>: the archive changed on disk since it was opened ...",
  // the zip reader's read errors (CRC mismatch, truncated data), and gather_payload's.
  [[nodiscard]] std::vector<std::byte> read() const override {
    const std::string& entry = zip_->entries().at(index_).name;
    zip_->check_unchanged(entry);
    gathered g = gather_payload(zip_->path(), entry, what_, meta_, zip_->read(index_));
    return std::move(g.bytes);
  }
  [[nodiscard]] const std::shared_ptr<const zip_reader>& zip() const noexcept { return zip_; }
  [[nodiscard]] std::size_t index() const noexcept { return index_; }
  [[nodiscard]] const TensorMeta& meta() const noexcept { return meta_; }

 private:
  std::shared_ptr<const zip_reader> zip_;
  std::size_t index_;
  std::string what_;
  TensorMeta meta_;
};

// The bytes of one pass-through record (an entry epgraph does not interpret), read from its
// archive entry when first needed (ArchiveRecord::bytes) and CRC-checked. Holds the archive open
// like archive_tensor_source; a file rewritten in place is refused by name.
class archive_entry_source final : public tensor_source {
 public:
  archive_entry_source(std::shared_ptr<const zip_reader> zip, std::size_t index)
      : zip_(std::move(zip)), index_(index) {}

  // Throws archive_error "<file>: <entry>: the archive changed on disk since it was opened ..."
  // and the zip reader's read errors (CRC mismatch, truncated data).
  [[nodiscard]] std::vector<std::byte> read() const override {
    zip_->check_unchanged(zip_->entries().at(index_).name);
    return zip_->read(index_);
  }
  [[nodiscard]] const std::shared_ptr<const zip_reader>& zip() const noexcept { return zip_; }
  [[nodiscard]] std::size_t index() const noexcept { return index_; }

 private:
  std::shared_ptr<const zip_reader> zip_;
  std::size_t index_;
};

// The archive source of a tensor whose bytes are unchanged since load_archive made it, or null
// (a changed tensor, a tensor made otherwise, or a Tensor type without the lazy hooks).
template <class Tensor>
const archive_tensor_source* archive_source_of(const Tensor& t,
                                               std::shared_ptr<const tensor_source>& keep) {
  if constexpr (has_lazy_data<Tensor>::value) {
    keep = tensor_data_traits<Tensor>::source(t);
    return dynamic_cast<const archive_tensor_source*>(keep.get());
  } else {
    (void)t;
    (void)keep;
    return nullptr;
  }
}

// Makes the Tensor of one raw payload: lazy (nothing read, the layout checked against the
// entry's size from the zip directory) when tensor_data_traits<Tensor> has the lazy hooks,
// otherwise read and gathered now.
template <class Tensor>
Tensor load_payload_tensor(const std::shared_ptr<const zip_reader>& zip, std::size_t index,
                           const std::string& what, const TensorMeta& meta) {
  const zip_entry& e = zip->entries().at(index);
  if constexpr (has_lazy_data<Tensor>::value) {
    checked_layout c = check_payload(zip->path(), e.name, what, meta, e.size);
    auto source = std::make_shared<const archive_tensor_source>(zip, index, what, meta);
    return tensor_data_traits<Tensor>::from_source(meta.dtype, std::move(c.sizes),
                                                   std::move(source));
  } else {
    gathered g = gather_payload(zip->path(), e.name, what, meta, zip->read(index));
    return tensor_data_traits<Tensor>::from_bytes(g.type, std::move(g.sizes), std::move(g.bytes));
  }
}

// What load_archive reads from one archive before it commits to the program.
template <class Tensor>
struct loaded_payloads {
  std::set<std::string> files;  // raw payload entries read into the program
  ordered_dict<Tensor> state_dict;
  ordered_dict<typename ExportedProgram<Tensor>::constant_type> constants;
};

// Reads one weights / constants config and its payloads into `out`.
template <class Tensor>
void load_config(const std::shared_ptr<const zip_reader>& zip, const ArchiveInfo& info,
                 const ExportGraphSignature& sig, const std::set<std::string>& others_files,
                 const std::string& config_name, const std::string& legacy_name,
                 const std::string& dir, bool is_constants, loaded_payloads<Tensor>& out) {
  const std::string& path = zip->path();
  const bool legacy = info.layout == "legacy";
  if (!legacy && zip->find(legacy_name)) return;  // torch's BC path: a pickle, passed through
  const auto config_index = zip->find(config_name);
  if (!config_index) {
    if (legacy) return;
    throw archive_error(path, config_name,
                        std::string("entry not found (every PT2 archive model needs its ") +
                            (is_constants ? "constants" : "weights") + " config)");
  }
  const auto entries = parse_payload_config(path, config_name, zip->read(*config_index));
  std::set<std::string> pickled_files;
  for (const auto& p : entries) {
    if (!loads_payload(p, is_constants)) pickled_files.insert(dir + p.path_name);
  }
  for (const auto& p : entries) {
    if (!loads_payload(p, is_constants)) continue;
    const std::string entry = dir + p.path_name;
    const std::string what = std::string(is_constants ? "constant '" : "weight '") + p.fqn + "'";
    const auto idx = zip->find(entry);
    if (!idx) {
      throw archive_error(path, entry,
                          "entry not found (named by '" + p.fqn + "' in " + config_name + ")");
    }
    if (!pickled_files.count(entry) && !others_files.count(entry)) out.files.insert(entry);
    if (is_constants && starts_with(p.path_name, kCustomObjPrefix)) {
      ScriptObject obj{custom_obj_class(sig, p.fqn), zip->read(*idx)};
      out.constants.insert(p.fqn, std::move(obj));
      continue;
    }
    if (!p.meta) {
      throw archive_error(path, config_name, what + " has a raw payload but no tensor_meta");
    }
    Tensor t = load_payload_tensor<Tensor>(zip, *idx, what, *p.meta);
    if (is_constants) {
      out.constants.insert(p.fqn, std::move(t));
    } else {
      out.state_dict.insert(p.fqn, std::move(t));
    }
  }
}

template <class Tensor>
ExportedProgram<Tensor> load_archive_impl(const std::filesystem::path& file,
                                          std::string_view program) {
  const auto zip = std::make_shared<const zip_reader>(file);
  const std::string& path = zip->path();
  ArchiveInfo info = detect_layout(*zip, program);
  const model_paths paths = paths_of(info);
  const std::set<std::string> others_files =
      other_programs_files(path, info, [&](const std::string& name) {
        const auto i = zip->find(name);
        return i ? std::optional<std::vector<std::byte>>(zip->read(*i)) : std::nullopt;
      });

  // The program.
  const auto program_index = zip->find(paths.program);
  ExportedProgram<Tensor> ep = [&] {
    const std::string text = archive_text(*zip, *program_index);
    try {
      return json::load_exported_program_from_string<Tensor>(text);
    } catch (const json::serialization_error& e) {
      throw archive_error(path, paths.program, e.what());
    }
  }();

  // Payloads: weights, then constants.
  loaded_payloads<Tensor> loaded;
  load_config(zip, info, ep.graph_signature(), others_files, paths.weights_config,
              paths.legacy_weights, paths.weights_dir, false, loaded);
  load_config(zip, info, ep.graph_signature(), others_files, paths.constants_config,
              paths.legacy_constants, paths.constants_dir, true, loaded);

  // Everything else passes through verbatim, unread until asked for (ArchiveRecord::bytes).
  for (std::size_t i = 0; i < zip->entries().size(); ++i) {
    const std::string& name = zip->entries()[i].name;
    if (name == paths.program || loaded.files.count(name)) continue;
    info.records.emplace_back(name, nullptr, std::make_shared<const archive_entry_source>(zip, i));
  }

  // Commit: nothing below throws except allocation in the moves of small containers.
  for (auto& [fqn, t] : loaded.state_dict) ep.state_dict().insert_or_assign(fqn, std::move(t));
  for (auto& [fqn, c] : loaded.constants) ep.constants().insert_or_assign(fqn, std::move(c));
  ep.metadata().archive = std::move(info);
  return ep;
}

// --- save_archive, step by step ----------------------------------------------------------------

using bytes_ptr = std::shared_ptr<const std::vector<std::byte>>;

// One entry to write: bytes in memory, or entry `index` of `zip` copied raw.
struct payload_file {
  bytes_ptr data;
  std::shared_ptr<const zip_reader> zip;
  std::size_t index = 0;
};

// The ArchiveInfo save_archive writes: the program's, or torch 2.13's layout for a program that
// was not loaded from an archive.
template <class Tensor>
ArchiveInfo archive_info_for(const ExportedProgram<Tensor>& ep, const std::filesystem::path& out) {
  if (ep.metadata().archive) return *ep.metadata().archive;
  ArchiveInfo info;
  info.layout = "pt2";
  info.prefix = out.stem().string() + "/";
  info.model_name = "model";
  const model_paths p = paths_of(info);
  const std::string sample = info.prefix + std::string(kSampleInputsDir) + "model.pt";
  info.entry_order = {p.weights_config,
                      p.constants_config,
                      p.program,
                      sample,
                      info.prefix + std::string(kArchiveFormat),
                      info.prefix + std::string(kArchiveVersion),
                      info.prefix + ".data/version",
                      info.prefix + std::string(kByteorder)};
  info.records = {ArchiveRecord{sample, to_bytes("")},
                  ArchiveRecord{info.entry_order[4], to_bytes("pt2")},
                  ArchiveRecord{info.entry_order[5], to_bytes("0")},
                  ArchiveRecord{info.entry_order[6], to_bytes("6\n")},
                  ArchiveRecord{info.entry_order[7], to_bytes("little")}};
  return info;
}

// A regenerated config: {config entry bytes or null, files name -> data, new files, dropped}.
struct config_out {
  bytes_ptr config;                           // null: write no config
  std::map<std::string, payload_file> files;  // payload files to write (by name)
  std::vector<std::string> new_files;         // files not in the input, in order
  std::set<std::string> dropped;              // input payload files not written
};

// What every config regeneration of one save shares.
struct save_context {
  std::string out_path;
  bool legacy = false;
  std::map<std::string, const ArchiveRecord*> records;  // pass-through records by name
  std::set<std::string> taken;                          // every entry name of the input
  std::set<std::string> others_files;  // payload files of the archive's other programs
};

// Regenerates one weights or constants config from the program's tensors (see save_archive).
template <class Tensor>
class config_writer {
 public:
  config_writer(const ExportedProgram<Tensor>& ep, const save_context& ctx, std::string dir,
                bool is_constants)
      : ep_(ep), ctx_(ctx), dir_(std::move(dir)), is_constants_(is_constants) {}

  config_out run(const std::string& config_name) {
    const auto rec = ctx_.records.find(config_name);
    if (rec != ctx_.records.end()) {
      original_ = parse_payload_config(ctx_.out_path, config_name, rec->second->bytes());
    }
    index_original();
    keep_storage_layouts();
    for_each_tensor_or_object();
    for (const auto& p : original_) {  // pickled entries pass through unless replaced
      if (!loads_payload(p, is_constants_) && config_.find(p.fqn) == nullptr) {
        config_.add(p.fqn, p.raw);
      }
    }
    if (ctx_.legacy && rec == ctx_.records.end() && config_.empty()) return std::move(r_);
    // Trees built and compared so that destroying them never allocates (json/detail/tree.hpp).
    ordered_json doc = json::detail::object_of("config", config_.take());
    json::detail::JsonDisposer dispose_doc(doc);
    bool unchanged = false;
    if (rec != ctx_.records.end()) {
      ordered_json before;
      json::detail::JsonDisposer dispose_before(before);
      try {
        before = json::detail::parse_ordered(to_text(rec->second->bytes()));
        unchanged = before == doc;
      } catch (const nlohmann::json::exception&) {  // parse_error or out_of_range
        unchanged = false;
      }
    }
    r_.config = unchanged ? rec->second->shared_bytes() : to_bytes(doc.dump());
    return std::move(r_);
  }

 private:
  using traits = tensor_traits<Tensor>;
  using view_list = std::vector<std::pair<payload_layout, const std::vector<std::byte>*>>;

  bool passes_through(const payload_entry& p) const {
    return !loads_payload(p, is_constants_) || ctx_.others_files.count(dir_ + p.path_name);
  }

  void index_original() {
    for (const auto& p : original_) {
      by_fqn_.emplace(p.fqn, &p);
      // Pickled payloads, and files other programs of the archive read, pass through.
      if (passes_through(p)) pass_files_.insert(dir_ + p.path_name);
    }
    for (const auto& p : original_) {
      if (loads_payload(p, is_constants_) && !pass_files_.count(dir_ + p.path_name)) {
        r_.dropped.insert(dir_ + p.path_name);
      }
    }
  }

  template <class F>
  void for_each_tensor(F&& f) const {
    if (is_constants_) {
      for (const auto& [fqn, c] : ep_.constants()) {
        if (const auto* t = std::get_if<Tensor>(&c)) f(fqn, *t);
      }
    } else {
      for (const auto& [fqn, t] : ep_.state_dict()) f(fqn, t);
    }
  }

  // The input's config entry of `fqn` when the tensor can keep its storage file, else null.
  const payload_entry* keepable(const std::string& fqn, const Tensor& t) const {
    const auto o = by_fqn_.find(fqn);
    if (o == by_fqn_.end() || !loads_payload(*o->second, is_constants_) ||
        pass_files_.count(dir_ + o->second->path_name) || !o->second->meta) {
      return nullptr;
    }
    const TensorMeta& m = *o->second->meta;
    if (traits::dtype(t) != m.dtype) return nullptr;
    const auto l = layout_of(m);
    if (!l || traits::sizes(t) != l->sizes) return nullptr;
    return o->second;
  }

  // Storage layouts kept from the input (torch shares one file between tied weights and slices
  // of one tensor, and keeps strides): a file whose tensors are all unchanged views of one
  // source entry is copied raw from it; otherwise it is rebuilt from the tensors read from it
  // when each still has its config entry's dtype and sizes and overlapping views agree. Those
  // config entries are written back verbatim; other tensors are written contiguous.
  void keep_storage_layouts() {
    std::map<std::string, std::vector<std::pair<std::string, const Tensor*>>> groups;
    for_each_tensor([&](const std::string& fqn, const Tensor& t) {
      if (const payload_entry* o = keepable(fqn, t)) groups[o->path_name].emplace_back(fqn, &t);
    });
    for (const auto& [path_name, members] : groups) {
      std::optional<payload_file> file = raw_copy_of(members);
      if (!file) file = rebuilt_storage_of(members);
      if (!file) continue;
      kept_storage_[path_name] = std::move(*file);
      used_.insert(path_name);
      for (const auto& m : members) kept_fqns_.insert(m.first);
    }
  }

  // The source entry to copy raw when every member is an unchanged view of one archive entry as
  // its config entry describes it (same layout), else nothing.
  std::optional<payload_file> raw_copy_of(
      const std::vector<std::pair<std::string, const Tensor*>>& members) const {
    payload_file file;
    for (const auto& [fqn, t] : members) {
      std::shared_ptr<const tensor_source> keep;
      const archive_tensor_source* s = archive_source_of(*t, keep);
      if (!s || !(s->meta() == *by_fqn_.at(fqn)->meta)) return std::nullopt;
      if (file.zip && (file.zip != s->zip() || file.index != s->index())) return std::nullopt;
      file.zip = s->zip();
      file.index = s->index();
    }
    return file;
  }

  std::optional<payload_file> rebuilt_storage_of(
      const std::vector<std::pair<std::string, const Tensor*>>& members) const {
    view_list views;
    std::deque<std::vector<std::byte>> owned;  // to_bytes results returned by value
    for (const auto& [fqn, t] : members) {
      auto l = layout_of(*by_fqn_.at(fqn)->meta);
      decltype(auto) data = tensor_data_traits<Tensor>::to_bytes(*t);
      if (static_cast<std::uint64_t>(data.size()) != l->numel * l->esize) return std::nullopt;
      const std::vector<std::byte>* bytes = &data;
      if constexpr (!std::is_reference_v<decltype(data)>) {
        owned.push_back(std::move(data));
        bytes = &owned.back();
      }
      views.emplace_back(std::move(*l), bytes);
    }
    auto storage = rebuild_storage(views);
    if (!storage) return std::nullopt;
    payload_file file;
    file.data = std::make_shared<const std::vector<std::byte>>(std::move(*storage));
    return file;
  }

  void put_file(const std::string& entry, payload_file file) {
    if (!ctx_.taken.count(entry)) r_.new_files.push_back(entry);
    r_.files[entry] = std::move(file);
    r_.dropped.erase(entry);
  }

  void add_kept(const std::string& fqn) {
    const payload_entry& o = *by_fqn_.at(fqn);
    const std::string entry = dir_ + o.path_name;
    config_.set(fqn, o.raw);
    if (!r_.files.count(entry)) put_file(entry, kept_storage_.at(o.path_name));
  }

  std::string pick_path(const payload_entry* o, std::string_view prefix) {
    if (o && loads_payload(*o, is_constants_) && !pass_files_.count(dir_ + o->path_name) &&
        !used_.count(o->path_name)) {
      used_.insert(o->path_name);
      return o->path_name;
    }
    for (std::size_t n = 0;; ++n) {
      std::string name = std::string(prefix) + std::to_string(n);
      if (!used_.count(name) && !ctx_.taken.count(dir_ + name)) {
        used_.insert(name);
        return name;
      }
    }
  }

  const payload_entry* original_of(const std::string& fqn, bool pickle) const {
    const auto it = by_fqn_.find(fqn);
    if (it == by_fqn_.end() || !loads_payload(*it->second, pickle)) return nullptr;
    return it->second;
  }

  // An unchanged tensor whose source is a whole archive entry (its bytes exactly: contiguous,
  // offset 0, nothing else in the entry) is copied raw from that entry under whatever name it
  // is written now (a renamed tensor, a tensor moved between state_dict and constants): sets
  // `file` and returns true. Reads nothing.
  bool whole_entry_of(const Tensor& t, dtype type, const std::vector<std::int64_t>& sizes,
                      payload_file& file) const {
    std::shared_ptr<const tensor_source> keep;
    const archive_tensor_source* s = archive_source_of(t, keep);
    if (!s || s->meta().dtype != type) return false;
    const auto l = layout_of(s->meta());
    if (!l || l->sizes != sizes || l->offset != 0 || !is_contiguous_view(*l)) return false;
    if (s->zip()->entries().at(s->index()).size != l->numel * l->esize) return false;
    file.zip = s->zip();
    file.index = s->index();
    return true;
  }

  void add_tensor(const std::string& fqn, const Tensor& t) {
    const payload_entry* o = original_of(fqn, is_constants_);  // null: replaces a pickled entry
    const std::string path_name = pick_path(o, is_constants_ ? kTensorPrefix : kWeightPrefix);
    const std::string entry = dir_ + path_name;
    const dtype type = traits::dtype(t);
    const std::vector<std::int64_t> sizes = traits::sizes(t);
    const std::size_t esize = element_size(type);
    if (esize == 0) {
      throw archive_error(
          ctx_.out_path, entry,
          fqn + ": dtype " + std::to_string(static_cast<int>(type)) + " has no known element size");
    }
    payload_file file;
    if (!whole_entry_of(t, type, sizes, file)) {
      std::uint64_t numel = 1;
      for (auto s : sizes) numel *= static_cast<std::uint64_t>(s < 0 ? 0 : s);
      const auto& data = tensor_data_traits<Tensor>::to_bytes(t);
      if (static_cast<std::uint64_t>(data.size()) != numel * esize) {
        throw archive_error(ctx_.out_path, entry,
                            fqn + ": the tensor's data has " + std::to_string(data.size()) +
                                " bytes but dtype " + std::string(dtype_name(type)) +
                                " and sizes " + shape_text(sizes) + " need " +
                                std::to_string(numel * esize));
      }
      file.data = std::make_shared<std::vector<std::byte>>(data.begin(), data.end());
    }
    TensorMeta meta;
    meta.dtype = type;
    for (auto s : sizes) meta.sizes.emplace_back(s);
    for (auto s : contiguous_strides_of(sizes)) meta.strides.emplace_back(s);
    meta.device = traits::device(t);
    const bool is_param =
        o ? o->is_param : (!is_constants_ && is_parameter(ep_.graph_signature(), fqn));
    meta.requires_grad = o && o->meta ? o->meta->requires_grad : is_param;
    config_.set(fqn,
                json::detail::object_of("path_name", path_name, "is_param", is_param, "use_pickle",
                                        false, "tensor_meta", json::tensor_meta_to_json(meta)));
    put_file(entry, std::move(file));
  }

  void add_object(const std::string& fqn, const ScriptObject& obj) {
    const payload_entry* o = original_of(fqn, true);
    const std::string path_name = pick_path(o, kCustomObjPrefix);
    config_.set(fqn, json::detail::object_of("path_name", path_name, "is_param", false,
                                             "use_pickle", true, "tensor_meta", nullptr));
    payload_file file;
    file.data = std::make_shared<const std::vector<std::byte>>(obj.payload);
    put_file(dir_ + path_name, std::move(file));
  }

  void for_each_tensor_or_object() {
    if (is_constants_) {
      for (const auto& [fqn, c] : ep_.constants()) {
        if (kept_fqns_.count(fqn)) {
          add_kept(fqn);
        } else if (const auto* t = std::get_if<Tensor>(&c)) {
          add_tensor(fqn, *t);
        } else {
          add_object(fqn, std::get<ScriptObject>(c));
        }
      }
    } else {
      for (const auto& [fqn, t] : ep_.state_dict()) {
        if (kept_fqns_.count(fqn)) {
          add_kept(fqn);
        } else {
          add_tensor(fqn, t);
        }
      }
    }
  }

  const ExportedProgram<Tensor>& ep_;
  const save_context& ctx_;
  std::string dir_;
  bool is_constants_;
  std::vector<payload_entry> original_;
  std::map<std::string, const payload_entry*> by_fqn_;
  std::set<std::string> pass_files_;
  std::map<std::string, payload_file> kept_storage_;  // path_name -> file to write
  std::set<std::string> kept_fqns_;
  std::set<std::string> used_;
  json::detail::MemberList config_;  // the entries, made into one object by run()
  config_out r_;
};

// Regenerates one config, or writes none when the input keeps torch's BC pickle for it.
template <class Tensor>
config_out regenerate_config(const ExportedProgram<Tensor>& ep, const save_context& ctx,
                             const std::string& config_name, const std::string& legacy_name,
                             const std::string& dir, bool is_constants) {
  if (!ctx.legacy && ctx.records.count(legacy_name)) return {};  // BC pickle kept as a record
  return config_writer<Tensor>(ep, ctx, dir, is_constants).run(config_name);
}

// How a pass-through record is written: copied raw from its source archive entry while
// unchanged (not read), else from its bytes (read now when it has not been).
inline payload_file record_file(const ArchiveRecord& r) {
  payload_file f;
  if (r.is_unchanged_from_source()) {
    if (const auto* s = dynamic_cast<const archive_entry_source*>(r.source.get())) {
      f.zip = s->zip();
      f.index = s->index();
      return f;
    }
  }
  f.data = r.shared_bytes();
  return f;
}

// The entries to write, in the input's order: the program, the configs with their new files
// just before them, kept and rewritten payload files, pass-through records.
inline std::vector<std::pair<std::string, payload_file>> assemble_entries(
    const ArchiveInfo& info, const model_paths& paths, const save_context& ctx,
    const bytes_ptr& program, const config_out& weights, const config_out& constants) {
  std::vector<std::pair<std::string, payload_file>> entries;
  auto bytes_file = [](bytes_ptr data) {
    payload_file f;
    f.data = std::move(data);
    return f;
  };
  auto emit_config = [&](const config_out& c, const std::string& name) {
    for (const auto& f : c.new_files) entries.emplace_back(f, c.files.at(f));
    if (c.config) entries.emplace_back(name, bytes_file(c.config));
  };
  bool weights_done = false, constants_done = false;
  for (const auto& name : info.entry_order) {
    if (name == paths.program) {
      entries.emplace_back(name, bytes_file(program));
    } else if (name == paths.weights_config && (weights.config || !weights.new_files.empty())) {
      emit_config(weights, name);
      weights_done = true;
    } else if (name == paths.constants_config &&
               (constants.config || !constants.new_files.empty())) {
      emit_config(constants, name);
      constants_done = true;
    } else if (weights.files.count(name)) {
      entries.emplace_back(name, weights.files.at(name));
    } else if (constants.files.count(name)) {
      entries.emplace_back(name, constants.files.at(name));
    } else if (weights.dropped.count(name) || constants.dropped.count(name)) {
      continue;
    } else if (auto it = ctx.records.find(name); it != ctx.records.end()) {
      entries.emplace_back(name, record_file(*it->second));
    }
  }
  if (!weights_done && weights.config) emit_config(weights, paths.weights_config);
  if (!constants_done && constants.config) emit_config(constants, paths.constants_config);
  return entries;
}

template <class Tensor>
void save_archive_impl(const ExportedProgram<Tensor>& ep, const std::filesystem::path& out) {
  const ArchiveInfo info = archive_info_for(ep, out);
  const model_paths paths = paths_of(info);
  save_context ctx;
  ctx.out_path = out.string();
  ctx.legacy = info.layout == "legacy";
  for (const auto& r : info.records) ctx.records.emplace(r.name, &r);
  ctx.taken.insert(info.entry_order.begin(), info.entry_order.end());
  ctx.others_files = other_programs_files(ctx.out_path, info, [&](const std::string& name) {
    const auto it = ctx.records.find(name);
    return it != ctx.records.end() ? std::optional<std::vector<std::byte>>(it->second->bytes())
                                   : std::nullopt;
  });
  const config_out weights = regenerate_config(ep, ctx, paths.weights_config, paths.legacy_weights,
                                               paths.weights_dir, false);
  const config_out constants = regenerate_config(ep, ctx, paths.constants_config,
                                                 paths.legacy_constants, paths.constants_dir, true);
  const bytes_ptr program = to_bytes(json::save_exported_program_to_string(ep));

  // libzip writes a temporary file next to `out` and renames it at commit: `out` may be the
  // archive the tensors are copied from (the copies read the file that was opened).
  zip_writer writer(out);
  for (auto& [name, file] : assemble_entries(info, paths, ctx, program, weights, constants)) {
    if (file.data) {
      writer.add(name, std::move(file.data));
    } else {
      writer.add_copy(name, std::move(file.zip), file.index);
    }
  }
  writer.commit();
}
}  // namespace detail

template <class Tensor>
ExportedProgram<Tensor> load_archive(const std::filesystem::path& file, std::string_view program) {
  return detail::load_archive_impl<Tensor>(file, program);
}

#if !(defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE) || \
    defined(EPGRAPH_DETAIL_BUILDING_COMPILED)
EPGRAPH_DETAIL_ARCHIVE_INLINE std::vector<std::string> archive_programs(
    const std::filesystem::path& file) {
  const zip_reader zip(file);
  if (zip.find(detail::kLegacyProgram)) return {"model"};
  const std::string prefix = detail::check_pt2_format(zip);
  std::vector<std::string> entries;
  for (const auto& e : zip.entries()) entries.push_back(e.name);
  return detail::model_names_in(entries, prefix);
}
#endif

template <class Tensor>
void save_archive(const ExportedProgram<Tensor>& ep, const std::filesystem::path& out) {
  detail::save_archive_impl(ep, out);
}

}  // namespace epgraph::archive
