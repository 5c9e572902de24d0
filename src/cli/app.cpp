// The `shapeflow` command: one subcommand per file of this folder (cli/common.h), each registered
// here.
#include "app.h"
#include "common.h"

#include <iostream>

namespace sf::cli {

const char *version() { return SF_VERSION; }

int runCommandLine(int argc, const char *const *argv) {
  // std::cout buffers on its own instead of passing every write through stdio (the text
  // listing of a 100k-node graph made 40% of its time in putc/fwrite). Nothing here writes to
  // stdout through stdio.
  std::ios_base::sync_with_stdio(false);
  CLI::App app{"shapeflow: element types, shapes (numbers, symbolic expressions, intervals) and "
               "shape values of every tensor of a neural network, before it runs",
               "shapeflow"};
  app.set_version_flag("--version", std::string("shapeflow ") + version());
  app.require_subcommand(1);
  std::vector<Command> commands;
  for (auto add : {addInfer, addContract, addWhy, addStats, addLower, addPlan, addCheckPlan, addRun, addCheck, addOps, addMemory, addSimplify})
    commands.push_back(add(app));
  auto finish = [](int rc) {
    std::cout.flush();
    std::cerr.flush();
    return rc;
  };
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError &e) {
    int rc = app.exit(e);
    return finish(rc == 0 ? 0 : 2);
  }
  try {
    for (const Command &c : commands)
      if (*c.app) return finish(c.run());
    return finish(2);
  } catch (const std::exception &e) {
    std::cerr << "shapeflow: internal error: " << e.what() << "\n";
    return finish(2);
  }
}

} // namespace sf::cli
