// Entry point of the `ferry` command line tool.
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.hpp"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + (argc > 0 ? 1 : 0), argv + argc);
  int status = ferry::cli::ferry_main(args, {std::cout, std::cerr});
  std::cout.flush();
  return status;
}
