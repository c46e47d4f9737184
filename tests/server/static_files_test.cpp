// The console's file handler on a real folder: what it serves, and that no client path
// makes it throw (long names, long paths, link loops, escapes).
#include "server/static_files.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "server/router.h"

namespace tollgate::server {
namespace {

namespace fs = std::filesystem;

class StaticFilesTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("tollgate_console_" + std::to_string(::getpid()) + "_" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_ / "assets");
    write("index.html", "<html>console</html>");
    write("assets/app.js", "console.log(1)");
    router_.set_get_fallback(make_console_handler(root_.string()));
  }
  void TearDown() override { fs::remove_all(root_); }

  void write(const std::string& relative, const std::string& text) {
    std::ofstream(root_ / relative) << text;
  }
  HttpResponse get(const std::string& path) {
    HttpRequest request;
    request.method = "GET";
    request.path = path;
    return router_.dispatch(request);
  }

  fs::path root_;
  Router router_;
};

TEST_F(StaticFilesTest, ServesAnAssetWithItsContentType) {
  HttpResponse response = get("/assets/app.js");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "console.log(1)");
  EXPECT_EQ(response.content_type, "text/javascript; charset=utf-8");
}

TEST_F(StaticFilesTest, APagePathGetsTheIndex) {
  HttpResponse response = get("/threads/some-page");
  EXPECT_EQ(response.status, 200);
  EXPECT_EQ(response.body, "<html>console</html>");
}

TEST_F(StaticFilesTest, AMissingAssetIs404) {
  EXPECT_EQ(get("/assets/missing.js").status, 404);
}

// Defect 1: a segment over 255 bytes made std::filesystem throw (ENAMETOOLONG).
TEST_F(StaticFilesTest, ANameOver255BytesIs404) {
  EXPECT_EQ(get("/" + std::string(256, 'a')).status, 404);
  EXPECT_EQ(get("/assets/" + std::string(300, 'a') + ".js").status, 404);
}

// Defect 1: a path over PATH_MAX made std::filesystem throw.
TEST_F(StaticFilesTest, APathOver4096BytesIs404) {
  std::string path;
  while (path.size() <= 4096) path += "/" + std::string(200, 'a');
  EXPECT_EQ(get(path).status, 404);
}

// Defect 1: resolving a link loop made std::filesystem throw (ELOOP).
TEST_F(StaticFilesTest, ALinkLoopIsNotAFile) {
  fs::create_symlink(root_ / "loop.js", root_ / "loop.js");
  fs::create_symlink(root_ / "b", root_ / "a");
  fs::create_symlink(root_ / "a", root_ / "b");
  EXPECT_EQ(get("/loop.js").status, 404);
  EXPECT_EQ(get("/a/x.js").status, 404);
  EXPECT_EQ(get("/a").status, 200);  // a page path: the index, as for any unknown page
}

TEST_F(StaticFilesTest, APathLeavingTheFolderIs404) {
  EXPECT_EQ(get("/../" + root_.filename().string() + "/index.html").status, 404);
  EXPECT_EQ(get("/assets/../../etc/passwd").status, 404);
}

TEST_F(StaticFilesTest, ALinkLeavingTheFolderIsNotServed) {
  std::ofstream(root_.parent_path() / (root_.filename().string() + "_secret.txt")) << "secret";
  fs::create_symlink(root_.parent_path() / (root_.filename().string() + "_secret.txt"),
                     root_ / "secret.txt");
  EXPECT_EQ(get("/secret.txt").status, 404);
  fs::remove(root_.parent_path() / (root_.filename().string() + "_secret.txt"));
}

TEST_F(StaticFilesTest, AControlByteInThePathIs404) {
  EXPECT_EQ(get(std::string("/assets/app.js\0.html", 20)).status, 404);
  EXPECT_EQ(get("/assets/app\n.js").status, 404);
}

}  // namespace
}  // namespace tollgate::server
