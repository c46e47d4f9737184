// Runs a fuzz target over files instead of under libFuzzer: every file named, and every file
// under every folder named, once, in name order. This is how the committed corpora (and the
// crashes found, which join them) run as regression tests in every build with tests.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size);

int main(int argc, char** argv) {
  namespace fs = std::filesystem;
  std::vector<fs::path> files;
  for (int i = 1; i < argc; ++i) {
    if (fs::is_directory(argv[i])) {
      for (const auto& entry : fs::recursive_directory_iterator(argv[i])) {
        if (entry.is_regular_file()) files.push_back(entry.path());
      }
    } else {
      files.emplace_back(argv[i]);
    }
  }
  std::sort(files.begin(), files.end());
  for (const fs::path& file : files) {
    std::error_code size_error;
    const std::uintmax_t size = fs::file_size(file, size_error);
    std::string bytes(size_error ? 0 : size, '\0');
    std::ifstream in(file, std::ios::binary);
    if (size_error || !in.read(bytes.data(), static_cast<std::streamsize>(bytes.size()))) {
      std::cerr << file << ": cannot be read\n";
      return 1;
    }
    LLVMFuzzerTestOneInput(reinterpret_cast<const std::uint8_t*>(bytes.data()), bytes.size());
  }
  std::cout << files.size() << " inputs ran\n";
  return files.empty() ? 1 : 0;
}
