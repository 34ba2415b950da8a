// epgraph_bench_archive: time and peak memory of `pt2_edit copy/show/validate` on a multi-GB
// archive. SPDX-License-Identifier: BSD-3-Clause
//
// Generates an archive with >= 2 GiB of weights (by default; `--gib X` changes it) in a temporary
// directory with epgraph itself, then runs `pt2_edit copy`, `cp` of the same file, `pt2_edit show`
// and `pt2_edit validate` as child processes, taking each child's peak RSS from wait4's rusage
// (so the generator's memory does not count) and its wall time; prints one line per figure and
// deletes the directory. Skips with a message (exit 0) when the disk lacks room.
//
//   epgraph_bench_archive [--pt2-edit PATH] [--gib X] [--dir DIR] [--rounds N] [--keep 1]
//
// --keep 1 leaves the directory (and says where) for profiling.

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <epgraph/archive/archive.hpp>
#include <filesystem>
#include <iostream>
#include <memory>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#ifndef EPGRAPH_PT2_EDIT
#define EPGRAPH_PT2_EDIT "pt2_edit"
#endif

namespace {

namespace fs = std::filesystem;
using epgraph::dtype;
using epgraph::HostTensor;
using Program = epgraph::ExportedProgram<HostTensor>;

// x -> add(x, p_w0) -> add(., p_w1) ... -> output; weights float32[rows, 1024], each `bytes_each`.
Program weight_chain(int weights, std::uint64_t bytes_each) {
  using namespace epgraph;  // NOLINT: local
  const auto rows = static_cast<std::int64_t>(bytes_each / (1024 * 4));
  auto g = std::make_unique<Graph>();
  std::vector<Node*> ws;
  for (int i = 0; i < weights; ++i) ws.push_back(g->placeholder("p_w" + std::to_string(i)));
  Node* x = g->placeholder("x");
  const TensorMeta meta = tensor_meta_of(HostTensor::zeros(dtype::float32, {rows, 1024}));
  x->mutable_meta().val = meta;
  Node* prev = x;
  for (Node* w : ws) {
    w->mutable_meta().val = meta;
    prev = g->call_function("torch.ops.aten.add.Tensor", {prev, w});
    prev->mutable_meta().val = meta;
  }
  g->output({prev});
  ExportGraphSignature sig;
  ordered_dict<HostTensor> sd;
  for (int i = 0; i < weights; ++i) {
    const std::string fqn = "w" + std::to_string(i);
    sig.input_specs.emplace_back(InputKind::PARAMETER, TensorArgument{"p_w" + std::to_string(i)},
                                 fqn);
    sd.insert(fqn, HostTensor::full(dtype::float32, {rows, 1024}, static_cast<double>(i + 1)));
  }
  sig.input_specs.emplace_back(InputKind::USER_INPUT, TensorArgument{"x"});
  sig.output_specs.emplace_back(OutputKind::USER_OUTPUT, TensorArgument{std::string(prev->name())});
  ProgramMetadata md;
  md.opset_version = {{"aten", 10}};
  md.verifiers = {"ATEN"};
  return Program(std::move(g), std::move(sig), std::move(sd), {}, std::move(md));
}

struct child_result {
  int status = -1;
  double seconds = 0;
  double peak_rss_mb = 0;
};

// Runs `argv` with stdout to /dev/null; wall time and peak RSS of the child (wait4).
child_result run_child(const std::vector<std::string>& argv) {
  std::vector<char*> args;
  for (const auto& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::cout.flush();  // the child must not inherit unwritten output
  std::fflush(nullptr);
  const auto start = std::chrono::steady_clock::now();
  const pid_t pid = ::fork();
  if (pid < 0) {
    std::perror("fork");
    std::exit(1);
  }
  if (pid == 0) {
    if (std::freopen("/dev/null", "w", stdout) == nullptr) std::_Exit(126);
    ::execvp(args[0], args.data());
    std::_Exit(127);
  }
  int status = 0;
  struct rusage ru {};
  ::wait4(pid, &status, 0, &ru);
  child_result r;
  r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.peak_rss_mb = static_cast<double>(ru.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
  return r;
}

child_result must(const std::vector<std::string>& argv) {
  child_result r = run_child(argv);
  if (r.status != 0) {
    std::cerr << "bench_archive: `" << argv[0] << " " << argv[1] << "` exited with " << r.status
              << "\n";
    std::exit(1);
  }
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  std::string pt2_edit = EPGRAPH_PT2_EDIT;
  double gib = 2.0;
  int rounds = 2;
  bool keep = false;
  fs::path base = fs::temp_directory_path();
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--pt2-edit") {
      pt2_edit = argv[i + 1];
    } else if (a == "--gib") {
      gib = std::atof(argv[i + 1]);
    } else if (a == "--dir") {
      base = argv[i + 1];
    } else if (a == "--keep") {
      keep = std::string(argv[i + 1]) == "1";
    } else if (a == "--rounds") {
      rounds = std::max(1, std::atoi(argv[i + 1]));
    } else {
      std::cerr << "usage: epgraph_bench_archive [--pt2-edit PATH] [--gib X] [--dir DIR] "
                   "[--rounds N] [--keep 1]\n";
      return 2;
    }
  }
  const std::uint64_t each = std::uint64_t{256} << 20;  // 256 MiB per weight
  const int weights = std::max(1, static_cast<int>(gib * 4.0 + 0.5));
  const std::uint64_t total = each * static_cast<std::uint64_t>(weights);
  // Source, copy and cp's copy, plus 10% and 512 MiB of slack.
  const std::uint64_t need = total * 3 + total / 10 + (std::uint64_t{512} << 20);
  std::error_code ec;
  const fs::space_info space = fs::space(base, ec);
  if (ec || space.available < need) {
    std::cout << "bench=archive_copy skipped: " << base.string() << " has "
              << (ec ? 0 : space.available >> 20) << " MiB free, needs " << (need >> 20)
              << " MiB\n";
    return 0;
  }
  const fs::path dir = base / ("epgraph_bench_archive_" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string src = (dir / "src.pt2").string();
  const std::string out = (dir / "out.pt2").string();
  const std::string cp_out = (dir / "cp.pt2").string();
  {
    const auto start = std::chrono::steady_clock::now();
    epgraph::archive::save_archive(weight_chain(weights, each), src);
    const double s =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    std::cout << "bench=archive_generate weights=" << weights << " bytes=" << fs::file_size(src)
              << " seconds=" << s << "\n";
  }
  const std::uintmax_t bytes = fs::file_size(src);

  // Alternate copy and cp; minimum time of each, maximum peak RSS of the copies.
  child_result copy_best, cp_best;
  copy_best.seconds = cp_best.seconds = 1e30;
  for (int r = 0; r < rounds; ++r) {
    fs::remove(out);
    fs::remove(cp_out);
    const child_result c = must({pt2_edit, "copy", src, "-o", out});
    const child_result p = must({"cp", src, cp_out});
    copy_best.seconds = std::min(copy_best.seconds, c.seconds);
    copy_best.peak_rss_mb = std::max(copy_best.peak_rss_mb, c.peak_rss_mb);
    cp_best.seconds = std::min(cp_best.seconds, p.seconds);
  }
  std::printf(
      "bench=archive_copy bytes=%ju seconds=%.3f peak_rss_mb=%.1f cp_seconds=%.3f "
      "ratio_to_cp=%.2f target_rss_mb<=256 target_ratio<=1.5\n",
      bytes, copy_best.seconds, copy_best.peak_rss_mb, cp_best.seconds,
      copy_best.seconds / cp_best.seconds);
  // The copy holds the same weights: a second copy of it reads back through epgraph (lazily).
  {
    const auto a = epgraph::archive::load_archive(out);
    const HostTensor& last = a.state_dict().at("w" + std::to_string(weights - 1));
    float v = 0;
    std::memcpy(&v, last.bytes().data() + last.nbytes() - sizeof v, sizeof v);
    if (v != static_cast<float>(weights)) {
      std::cerr << "bench_archive: the copy's last weight holds " << v << "\n";
      return 1;
    }
  }
  for (const char* cmd : {"show", "validate"}) {
    child_result best;
    best.seconds = 1e30;
    for (int r = 0; r < rounds; ++r) {
      const child_result c = must({pt2_edit, cmd, src});
      best.seconds = std::min(best.seconds, c.seconds);
      best.peak_rss_mb = std::max(best.peak_rss_mb, c.peak_rss_mb);
    }
    std::printf("bench=archive_%s bytes=%ju seconds=%.3f peak_rss_mb=%.1f target_rss_mb<=128\n",
                cmd, bytes, best.seconds, best.peak_rss_mb);
  }
  std::fflush(stdout);
  if (keep) {
    std::cout << "kept " << dir.string() << "\n";
  } else {
    fs::remove_all(dir, ec);
  }
  return 0;
}
