// epgraph::archive's readers: load_archive and archive_programs. In compiled mode (CMake option
// EPGRAPH_COMPILED, target epgraph::compiled) this is all a caller needs for HostTensor: they are
// compiled in the library. Header-only, the definitions come with it (archive/pt2_archive.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>
#include <string>
#include <string_view>
#include <vector>

#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "archive_error.hpp"

// `inline` when the definition comes with the headers; nothing when it is compiled in the library.
#if defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE
#define EPGRAPH_DETAIL_ARCHIVE_INLINE
#else
#define EPGRAPH_DETAIL_ARCHIVE_INLINE inline
#endif

namespace epgraph::archive {

/// Loads a torch.export archive (torch.export.load).
///
/// Lazy weights: when tensor_data_traits<Tensor> has the lazy hooks (from_source / source; the
/// bundled HostTensor has them), the raw weight and tensor-constant payloads are not read: each
/// tensor is made by from_source with a source naming its entry, after its layout has been
/// checked against the entry's size from the zip directory (the size checks below happen here,
/// at load). Its bytes are read, CRC-checked and gathered when first needed (HostTensor::bytes()
/// etc.); the archive file stays open (one descriptor, shared by the program's tensors) until the
/// last such tensor is gone, so a file renamed over the path (e.g. save_archive to the same path)
/// does not disturb them; a file rewritten in place makes the read throw archive_error "<file>:
/// <entry>: the archive changed on disk since it was opened (size <a> -> <b>, mtime <m> -> <n>
/// ns): load it again", and a corrupt entry the errors listed below ("corrupt data (CRC
/// mismatch)", ...), at the first access instead of at load. Without the hooks every payload is
/// read at load (from_bytes). The program JSON, the configs and custom objects are read at load.
/// Pass-through records (legacy pickles, sample inputs, version records, configs, other
/// programs' files: `metadata().archive->records`) are not kept in memory: each record holds a
/// source naming its entry and reads it on the first ArchiveRecord::bytes() call (is_loaded()
/// tells), refusing a file rewritten in place as tensors do.
///
/// Layouts:
/// - current ("pt2", torch >= 2.8; `package_pt2`): an optional root folder holding
///   `models/<name>.json` (one per program), `data/weights/<name>_weights_config.json` plus one
///   raw file per weight storage, `data/constants/<name>_constants_config.json` plus files,
///   `data/sample_inputs/`, `archive_format` (must be `pt2`), `archive_version` (must be `0`
///   when present), `byteorder` (must be `little` when present), `.data/version`, ...
///   Raw (use_pickle false) weights load into state_dict and raw tensor constants
///   (`tensor_<n>`) into constants as `Tensor` (through tensor_data_traits<Tensor>::from_bytes;
///   the elements selected by the config's sizes/strides/storage_offset, made contiguous, like
///   torch's `as_strided`); custom objects (`custom_obj_<n>`) load into constants as a
///   ScriptObject holding the entry's bytes and the class named by the signature's CUSTOM_OBJ
///   input. Pickled payloads (tensor subclasses, opaque objects) are not decoded: they are
///   absent from state_dict / constants and pass through (config entry and file) on save.
/// - legacy (torch <= 2.7): `serialized_exported_program.json`, `serialized_state_dict.pt`,
///   `serialized_constants.pt`, `serialized_example_inputs.pt` (torch.save pickles), `version`.
///   The pickles are not decoded: state_dict and constants stay empty (verify with
///   check_state=false) and every record passes through. Tensors that epgraph itself added and
///   saved into a legacy archive (see save_archive) are read back from its
///   `data/weights/model_weights_config.json` / `data/constants/model_constants_config.json`.
///
/// Programs: an archive may hold several programs (`package_pt2(f, exported_programs={"model":
/// a, "helper": b})`). `program` names the one to load; when empty, the archive's only program is
/// loaded, or, when it holds several, the one named `model`, as `torch.export.load` does
/// (torch/export/__init__.py: `exported_programs["model"]`). The other programs are not read:
/// their records (program JSON, configs, payload files, sample inputs) pass through byte for byte,
/// and payload files their configs name stay theirs even when the loaded program's config names
/// them too (save_archive never drops, rewrites or reuses them). archive_programs lists them.
///
/// The program's `metadata().archive` records the layout, root folder, model name, entry order
/// and every entry except the program JSON and loaded raw payloads, so save_archive can write
/// the same layout back. Entries may be stored or compressed.
///
/// Throws (nothing is returned on error: no partial program):
/// - archive_error "<file>: <problem>" for an unreadable file: "no such file", "not a zip file
///   (no end of central directory record)" (also a truncated file), "corrupt zip file
///   (inconsistent central directory)", "neither a PT2 archive (no archive_format entry) nor a
///   legacy torch.export archive (no serialized_exported_program.json entry)", "no model (no
///   entry <prefix>models/<name>.json)", "no program 'x' (the archive holds helper, model)" (the
///   requested program is absent; a legacy archive: "no program 'x' (a legacy archive holds one
///   program, model)"), "holds 2 programs (a, b) and none is named 'model' (the one
///   torch.export.load loads): name the program to load" (no `program` given);
/// - archive_error "<file>: <entry>: <problem>" for a bad entry: "corrupt data (CRC mismatch)",
///   "the entry appears twice in the archive", "expected 'pt2', found '<x>'" (archive_format),
///   "unsupported archive version '<v>' (epgraph reads version 0)", "unsupported byte order
///   '<x>' (epgraph reads little-endian archives only)", "entry not found (every PT2 archive
///   model needs its weights config)" / "... constants config", "invalid JSON (parse error at byte
///   <n>)", "config: expected an object", "config['<fqn>'].<field>: missing / expected a
///   ...", "entry not found (named by '<fqn>' in <config entry>)" (a payload file is missing),
///   "weight '<fqn>' (<dtype>, sizes [..], strides [..], storage_offset <n>) needs <n> bytes but
///   the entry has <m>", "... the entry has <n> bytes, not a multiple of the element size <e>",
///   "weight '<fqn>' has a raw payload but no tensor_meta", symbolic/negative sizes, "weight
///   '<fqn>' (<layout>) is too large" (byte count overflows), "weight '<fqn>' (<layout>) would
///   expand to <n> bytes, more than the limit of 268435456 bytes for a layout that repeats
///   storage elements" (see max_expanded_tensor_bytes);
/// - archive_error "<file>: <program entry>: <json path>: <problem>" when the program JSON is
///   rejected by epgraph::json (its serialization_error text after the entry name);
/// - what tensor_data_traits<Tensor>::from_bytes / from_source throws.
///
/// Complexity: O(number of entries + program size + size of the configs and format records):
/// the lazy payloads and pass-through records cost nothing until read (then O(entry size) each).
template <class Tensor = HostTensor>
[[nodiscard]] ExportedProgram<Tensor> load_archive(const std::filesystem::path& file,
                                                   std::string_view program = {});

/// The names of the programs an archive holds, in the archive's entry order: `<name>` of every
/// `models/<name>.json` of a current-layout archive (torch's load_pt2 reads them all into
/// `PT2ArchiveContents.exported_programs`, torch/export/pt2_archive/_package.py), `{"model"}`
/// for a legacy one. Reads the zip directory and the format records only.
///
/// Throws archive_error as load_archive does for an unreadable file or format record ("<file>:
/// not a zip file ...", "<file>: neither a PT2 archive ...", "<file>: <entry>: expected 'pt2',
/// found '<x>'", ...). An archive without programs gives an empty list.
/// Complexity: O(number of entries + size of the format records).
[[nodiscard]] EPGRAPH_DETAIL_ARCHIVE_INLINE std::vector<std::string> archive_programs(
    const std::filesystem::path& file);

#if defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): the archive entry
// points for HostTensor are compiled once in the library.
extern template ExportedProgram<HostTensor> load_archive<HostTensor>(const std::filesystem::path&,
                                                                     std::string_view);
#endif

}  // namespace epgraph::archive

#if !(defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE)
#include "pt2_archive.hpp"  // the definitions (header-only)
#endif
