// epgraph::archive's writer: save_archive. In compiled mode (CMake option EPGRAPH_COMPILED,
// target epgraph::compiled) this is all a caller needs for HostTensor: it is compiled in the
// library. Header-only, the definition comes with it (archive/pt2_archive.hpp).
// SPDX-License-Identifier: BSD-3-Clause
#pragma once

#include <filesystem>

#include "../ir/tensor.hpp"
#include "../program/exported_program.hpp"
#include "archive_error.hpp"

namespace epgraph::archive {

/// Saves `ep` as a torch.export archive at `out` (torch.export.save), replacing any file there.
///
/// When `ep.metadata().archive` is set (the program came from load_archive), the output keeps that
/// archive's layout, entry order and every pass-through record byte for byte, and the storage
/// layouts of its tensors; otherwise it is written in torch 2.13's current layout. Unchanged lazy
/// tensors and records are copied raw (not read, not recompressed), and an archive written over
/// the one it came from may be edited in place. docs/archive_format.md specifies these rules.
///
/// The file is written to a temporary file and renamed over `out` at the end, so on any error
/// `out` is untouched. Throws:
/// - archive_error "<out>: directory '<dir>' does not exist";
/// - archive_error "<out>: <entry>: <fqn>: the tensor's data has <n> bytes but dtype <d> and
///   sizes [..] need <m>" when tensor_data_traits<Tensor>::to_bytes disagrees with tensor_traits;
/// - archive_error "<out>: <entry>: <fqn>: dtype <n> has no known element size";
/// - archive_error "<out>: <config entry>: ..." when the config record kept from the input is
///   not valid (see load_archive);
/// - archive_error "<out>: <libzip text>" when writing fails;
/// - archive_error "<source>: <entry>: corrupt data (CRC mismatch); <out> was not written" when
///   the data of an entry copied raw into a new archive do not match their CRC;
/// - archive_error "<source>: <entry>: the archive changed on disk since it was opened ..." when
///   a tensor's source archive was rewritten in place since it was loaded (and what reading a
///   lazy tensor throws, see load_archive, when a changed tensor's bytes are needed);
/// - what epgraph::json::save_exported_program_to_string throws.
/// The program is not changed (lazy tensors read for the save keep their bytes read).
///
/// Complexity: O(archive size + program size); memory O(program size + records + the bytes of
/// new or changed tensors): raw copies stream through buffers of at most 2 MiB.
template <class Tensor>
void save_archive(const ExportedProgram<Tensor>& ep, const std::filesystem::path& out);

#if defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE
// Compiled mode (CMake option EPGRAPH_COMPILED, target epgraph::compiled): compiled once, for
// HostTensor, in the library.
extern template void save_archive<HostTensor>(const ExportedProgram<HostTensor>&,
                                              const std::filesystem::path&);
#endif

}  // namespace epgraph::archive

#if !(defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE)
#include "pt2_archive.hpp"  // the definition (header-only)
#endif
