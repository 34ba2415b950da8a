// Corpus test (ctest label "corpus"): every real archive in <shared>/corpus/real/archives/ is
// loaded, verified, printed, saved and reloaded unchanged, given a mutable buffer, saved,
// reloaded and verified again. The archives are read in place, never copied.
//
// <shared> is the compile definition EPGRAPH_SHARED_DIR, else ../shared next to the repository.
// Exit codes: 0 all passed, 1 a failure, 77 the folder is absent (register with
// SKIP_RETURN_CODE 77 so ctest reports "skipped", not failed).
// SPDX-License-Identifier: BSD-3-Clause

#include <unistd.h>

#include <algorithm>
#include <epgraph/archive/archive.hpp>
#include <epgraph/ir/print.hpp>
#include <epgraph/program/edit.hpp>
#include <epgraph/program/verify.hpp>
#include <exception>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

namespace fs = std::filesystem;

namespace {

fs::path shared_dir() {
#ifdef EPGRAPH_SHARED_DIR
  return fs::path(EPGRAPH_SHARED_DIR);
#else
  return fs::path(__FILE__).parent_path() / ".." / ".." / ".." / "shared";
#endif
}

std::vector<std::string> keys(const epgraph::ordered_dict<epgraph::HostTensor>& d) {
  std::vector<std::string> out;
  for (const auto& e : d) out.push_back(e.first);
  return out;
}

void expect(bool ok, const std::string& what) {
  if (!ok) throw std::runtime_error("check failed: " + what);
}

void run(const fs::path& file, const fs::path& work) {
  using epgraph::HostTensor;
  namespace ar = epgraph::archive;
  auto ep = ar::load_archive(file);
  const bool legacy = ep.metadata().archive && ep.metadata().archive->layout == "legacy";
  // A legacy archive's state is in torch.save pickles that epgraph does not decode.
  const epgraph::VerifyOptions options{!legacy};
  epgraph::verify(ep, options);
  std::cout << epgraph::to_string(ep.graph()) << "\n"
            << epgraph::to_string(ep.graph_signature()) << "\n";

  const fs::path same = work / ("same_" + file.filename().string());
  ar::save_archive(ep, same);
  const auto again = ar::load_archive(same);
  expect(epgraph::to_string(again.graph()) == epgraph::to_string(ep.graph()), "graph round trip");
  expect(epgraph::to_string(again.graph_signature()) == epgraph::to_string(ep.graph_signature()),
         "signature round trip");
  expect(keys(again.state_dict()) == keys(ep.state_dict()), "state_dict keys round trip");
  for (const auto& [k, v] : ep.state_dict()) expect(again.state_dict().at(k) == v, "weight " + k);
  expect(again.metadata().archive == ep.metadata().archive, "archive records round trip");
  epgraph::verify(again, options);

  epgraph::create_mutable_buffer(ep, "b_epgraph_corpus_cache",
                                 HostTensor::full(epgraph::dtype::float32, {2, 4}, 0.25));
  const fs::path edited = work / ("edited_" + file.filename().string());
  ar::save_archive(ep, edited);
  const auto back = ar::load_archive(edited);
  epgraph::verify(back, options);
  expect(epgraph::to_string(back.graph()) == epgraph::to_string(ep.graph()), "edited graph");
  expect(epgraph::to_string(back.graph_signature()) == epgraph::to_string(ep.graph_signature()),
         "edited signature");
  expect(keys(back.state_dict()) == keys(ep.state_dict()), "edited state_dict keys");
  expect(back.state_dict().at("epgraph_corpus_cache") ==
             HostTensor::full(epgraph::dtype::float32, {2, 4}, 0.25),
         "new buffer data");
  // Every record of the input is still there, byte for byte.
  for (const auto& r : ep.metadata().archive->records) {
    const auto& recs = back.metadata().archive->records;
    const bool kept = std::any_of(recs.begin(), recs.end(), [&](const epgraph::ArchiveRecord& s) {
      return s.name == r.name &&
             (s.bytes() == r.bytes() || s.name.find("_config.json") != std::string::npos);
    });
    expect(kept, "record " + r.name + " kept");
  }
}

}  // namespace

int main() {
  const fs::path dir = shared_dir() / "corpus" / "real" / "archives";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    std::cout << "SKIPPED: " << dir.string() << " is absent\n";
    return 77;
  }
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.is_regular_file()) files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  const fs::path work =
      fs::temp_directory_path() / ("epgraph_corpus_archive_" + std::to_string(::getpid()));
  fs::create_directories(work);
  int failures = 0;
  for (const auto& f : files) {
    std::cout << "=== " << f.filename().string() << "\n";
    try {
      run(f, work);
      std::cout << "PASS " << f.filename().string() << "\n";
    } catch (const std::exception& e) {
      ++failures;
      std::cout << "FAIL " << f.filename().string() << ": " << e.what() << "\n";
    }
  }
  fs::remove_all(work, ec);
  std::cout << files.size() - static_cast<std::size_t>(failures) << " of " << files.size()
            << " archives passed\n";
  return failures == 0 ? 0 : 1;
}
