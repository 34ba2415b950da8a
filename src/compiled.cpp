// The compiled mode's library (CMake option EPGRAPH_COMPILED, target epgraph::compiled): the
// HostTensor instantiations of the entry points that the headers declare `extern template` when
// EPGRAPH_COMPILED / EPGRAPH_COMPILED_JSON / EPGRAPH_COMPILED_ARCHIVE are 1. A file linking
// epgraph::compiled includes the same headers but does not instantiate (nor compile) these.
// SPDX-License-Identifier: BSD-3-Clause

// The definitions of the non-template entry points (archive_programs) are compiled here only.
#define EPGRAPH_DETAIL_BUILDING_COMPILED 1

#include <epgraph/epgraph.hpp>

// The implementation headers: the entry-point headers (json/load.hpp, ...) give only the
// declarations in compiled mode.
#if defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON
#include <epgraph/json/deserialize.hpp>
#include <epgraph/json/serialize.hpp>
#endif
#if defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE
#include <epgraph/archive/pt2_archive.hpp>
#endif

namespace epgraph {
template class ExportedProgram<HostTensor>;
template void validate_graph_signature<HostTensor>(const ExportedProgram<HostTensor>&);
template void verify<HostTensor>(const ExportedProgram<HostTensor>&, const VerifyOptions&);
}  // namespace epgraph

#if defined(EPGRAPH_COMPILED_JSON) && EPGRAPH_COMPILED_JSON
namespace epgraph::json {
template ExportedProgram<HostTensor> load_exported_program_from_string<HostTensor>(
    std::string_view);
template ExportedProgram<HostTensor> load_exported_program<HostTensor>(
    const std::filesystem::path&);
template std::string save_exported_program_to_string<HostTensor>(
    const ExportedProgram<HostTensor>&);
template void save_exported_program<HostTensor>(const ExportedProgram<HostTensor>&,
                                                const std::filesystem::path&);
}  // namespace epgraph::json
#endif

#if defined(EPGRAPH_COMPILED_ARCHIVE) && EPGRAPH_COMPILED_ARCHIVE
namespace epgraph::archive {
template ExportedProgram<HostTensor> load_archive<HostTensor>(const std::filesystem::path&,
                                                              std::string_view);
template void save_archive<HostTensor>(const ExportedProgram<HostTensor>&,
                                       const std::filesystem::path&);
}  // namespace epgraph::archive
#endif
