// Bounded-memory test: `pt2_edit copy` of an archive larger than the child's address-space limit.
// SPDX-License-Identifier: BSD-3-Clause
//
// Generates (with epgraph) an archive of two 128 MiB weights in a scratch directory, then runs
// `pt2_edit copy` in a child whose address space is limited to 96 MiB (setrlimit RLIMIT_AS, as
// `ulimit -v` does): a copy that held the weights in memory could not run there. Checks that the
// limit binds (a child under it cannot allocate the archive's size), that the copy succeeds, and
// that the copy holds the same weights. Exit 0 = pass, 1 = fail, 77 = skipped (sanitizer build,
// whose shadow memory needs a huge address space, or too little disk room).
//
//   epgraph_memory_copy PT2_EDIT

#include <sys/resource.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <new>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define EPGRAPH_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define EPGRAPH_SANITIZED 1
#endif
#endif

#ifndef EPGRAPH_SANITIZED  // a sanitizer build only reports the skip
namespace {

namespace fs = std::filesystem;
using epgraph::dtype;
using epgraph::HostTensor;
using Program = epgraph::ExportedProgram<HostTensor>;

constexpr rlim_t kLimit = rlim_t{96} << 20;                       // 96 MiB of address space
constexpr std::int64_t kRows = std::int64_t{128} << 10;           // 128Ki rows x 256 floats
constexpr std::uint64_t kWeightBytes = std::uint64_t{128} << 20;  // = 128 MiB per weight

// [p_a, p_b, x] -> add(add(x, p_a), p_b); a is filled with 1.5, b with -2.
Program two_weights() {
  using namespace epgraph;  // NOLINT: local
  auto g = std::make_unique<Graph>();
  Node* a = g->placeholder("p_a");
  Node* b = g->placeholder("p_b");
  Node* x = g->placeholder("x");
  Node* s = g->call_function("torch.ops.aten.add.Tensor", {x, a});
  Node* t = g->call_function("torch.ops.aten.add.Tensor", {s, b});
  g->output({t});
  const TensorMeta meta = tensor_meta_of(HostTensor::zeros(dtype::float32, {kRows, 256}));
  for (Node* n : {a, b, x, s, t}) n->mutable_meta().val = meta;
  ExportGraphSignature sig;
  sig.input_specs = {InputSpec(InputKind::PARAMETER, TensorArgument{"p_a"}, "a"),
                     InputSpec(InputKind::PARAMETER, TensorArgument{"p_b"}, "b"),
                     InputSpec(InputKind::USER_INPUT, TensorArgument{"x"})};
  sig.output_specs = {OutputSpec(OutputKind::USER_OUTPUT, TensorArgument{"add_1"})};
  ordered_dict<HostTensor> sd;
  sd.insert("a", HostTensor::full(dtype::float32, {kRows, 256}, 1.5));
  sd.insert("b", HostTensor::full(dtype::float32, {kRows, 256}, -2.0));
  ProgramMetadata md;
  md.opset_version = {{"aten", 10}};
  md.verifiers = {"ATEN"};
  return Program(std::move(g), std::move(sig), std::move(sd), {}, std::move(md));
}

// Runs `f` in a child limited to kLimit of address space; returns its exit status (128 + signal).
template <class F>
int in_limited_child(F&& f) {
  std::cout.flush();
  std::fflush(nullptr);
  const pid_t pid = ::fork();
  if (pid < 0) return -1;
  if (pid == 0) {
    struct rlimit rl {
      kLimit, kLimit
    };
    if (::setrlimit(RLIMIT_AS, &rl) != 0) std::_Exit(125);
    std::_Exit(f());
  }
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

bool all_equal(const HostTensor& t, float value) {
  const std::vector<std::byte>& b = t.bytes();
  for (std::size_t i = 0; i < b.size(); i += sizeof(float)) {
    float v = 0;
    std::memcpy(&v, b.data() + i, sizeof v);
    if (v != value) return false;
  }
  return true;
}

}  // namespace
#endif

int main(int argc, char** argv) {
#ifdef EPGRAPH_SANITIZED
  (void)argc;
  (void)argv;
  std::cout << "skipped: a sanitizer build needs far more address space than the limit\n";
  return 77;
#else
  if (argc != 2) {
    std::cerr << "usage: epgraph_memory_copy PT2_EDIT\n";
    return 1;
  }
  const std::string pt2_edit = argv[1];
  const fs::path dir =
      fs::temp_directory_path() / ("epgraph_memory_copy_" + std::to_string(::getpid()));
  std::error_code ec;
  const fs::space_info space = fs::space(fs::temp_directory_path(), ec);
  if (ec || space.available < 4 * 2 * kWeightBytes) {
    std::cout << "skipped: not enough free disk room in " << fs::temp_directory_path() << "\n";
    return 77;
  }
  fs::create_directories(dir);
  const std::string in = (dir / "in.pt2").string();
  const std::string out = (dir / "out.pt2").string();
  int failures = 0;
  auto check = [&](bool ok, const std::string& what) {
    std::cout << (ok ? "ok: " : "FAILED: ") << what << "\n";
    if (!ok) ++failures;
  };
  epgraph::archive::save_archive(two_weights(), in);
  const auto size = fs::file_size(in);
  check(size > 2 * kWeightBytes && size > kLimit * 2,
        "the archive (" + std::to_string(size) + " bytes) is more than twice the limit");

  // The limit binds: holding the archive's bytes is impossible under it.
  const int alloc = in_limited_child([&] {
    try {
      std::vector<std::byte> all(static_cast<std::size_t>(size));
      return all.size() == size ? 0 : 2;
    } catch (const std::bad_alloc&) {
      return 3;
    }
  });
  check(alloc == 3, "a child under the limit cannot allocate the archive's size (status " +
                        std::to_string(alloc) + ")");

  // The lazy copy runs under it.
  const int copy = in_limited_child([&] {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) return 126;
    ::execl(pt2_edit.c_str(), pt2_edit.c_str(), "copy", in.c_str(), "-o", out.c_str(),
            static_cast<char*>(nullptr));
    return 127;
  });
  check(copy == 0, "pt2_edit copy under a " + std::to_string(kLimit >> 20) +
                       " MiB address-space limit (status " + std::to_string(copy) + ")");
  if (copy == 0) {
    const Program ep = epgraph::archive::load_archive(out);
    check(all_equal(ep.state_dict().at("a"), 1.5f), "the copy's weight a holds 1.5 everywhere");
    check(all_equal(ep.state_dict().at("b"), -2.0f), "the copy's weight b holds -2 everywhere");
  }
  fs::remove_all(dir, ec);
  return failures == 0 ? 0 : 1;
#endif
}
