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
/// Weights are read lazily when tensor_data_traits<Tensor> has the lazy hooks (HostTensor has
/// them: bytes read and CRC-checked on first use, a file rewritten in place refused then), else at
/// load; pass-through records are read on first use. Reads the current ("pt2", torch >= 2.8) and
/// the legacy (torch <= 2.7) layouts; `program` names the program to load (empty: the only one,
/// or `model`, as torch.export.load does). `metadata().archive` records what save_archive needs
/// to write the same layout back. docs/archive_format.md specifies layouts, programs, lazy
/// weights and records.
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
