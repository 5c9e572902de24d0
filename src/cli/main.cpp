// The `shapeflow` command: one subcommand per file of this folder (cli/common.h), each registered
// here. Exit status: 0 clean, 1 the model has errors or a check failed (results are still
// printed), 2 a usage or I/O error.
#include "common.h"

#include <iostream>

int main(int argc, char **argv) {
  // std::cout buffers on its own instead of passing every write through stdio (the text
  // listing of a 100k-node graph made 40% of its time in putc/fwrite). Nothing here writes to
  // stdout through stdio.
  std::ios_base::sync_with_stdio(false);
  CLI::App app{"shapeflow: element types, shapes (numbers, symbolic expressions, intervals) and "
               "shape values of every tensor of a neural network, before it runs"};
  app.require_subcommand(1);
  using namespace sf::cli;
  std::vector<Command> commands;
  for (auto add : {addInfer, addContract, addWhy, addStats, addLower, addPlan, addCheckPlan, addRun, addCheck, addOps, addMemory})
    commands.push_back(add(app));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return rc == 0 ? 0 : 2;
  }
  try {
    for (const Command &c : commands)
      if (*c.app) return c.run();
    return 2;
  } catch (const std::exception &e) {
    std::cerr << "shapeflow: internal error: " << e.what() << "\n";
    return 2;
  }
}
