// The global operator new/delete of the test executables that inject allocation failures
// (support/alloc_failure.hpp): linked into epgraph_tests, epgraph_json_tests and
// epgraph_archive_tests, and kept out of their unity batches (tests/CMakeLists.txt).
// SPDX-License-Identifier: BSD-3-Clause
#include "alloc_failure.hpp"
#include "replace_operator_new.hpp"

void* epgraph_test::replaced_operator_new(std::size_t size) {
  return epgraph_test::alloc_detail::checked_malloc(size);
}
