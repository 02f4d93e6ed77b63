// Reader for the stub .i file that neml2-compile writes next to the artifact folders.
#pragma once

#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"
#include "neml2/aoti/artifact/hit.h"

namespace neml2::aoti
{
/// @brief What a stub says about one compiled model.
struct StubEntry
{
  std::string file;                      ///< the stub's path, for messages
  std::string model;                     ///< the model's block name
  std::filesystem::path artifact_folder; ///< `artifact_path` resolved against the stub's folder
};

/**
 * @brief Read the `[Models]/[name]` block of an AOTI stub.
 *
 * The block must have `type = AOTIModel` and an `artifact_path`, which is
 * resolved relative to the folder that holds the stub.
 */
inline StubEntry
read_stub(const std::string & path, const std::string & name)
{
  std::ifstream f(path, std::ios::binary);
  if (!f)
    throw FatalError("cannot open model file '" + path + "'");
  std::stringstream buf;
  buf << f.rdbuf();
  const HitSection root = parse_hit(buf.str(), path);

  const HitSection * models = root.section("Models");
  if (!models)
    throw FatalError(path + ": no [Models] block");
  const HitSection * block = models->section(name);
  if (!block)
  {
    std::string have;
    for (const auto & s : models->sections)
      have += (have.empty() ? "" : ", ") + s.name;
    throw FatalError(path + ": no model '" + name +
                     "' in [Models] (found: " + (have.empty() ? "none" : have) + ")");
  }
  const auto where = path + ":" + std::to_string(block->line) + ": model '" + name + "'";
  const auto * type = block->field("type");
  if (!type)
    throw FatalError(where + " has no 'type'");
  if (type->value != "AOTIModel")
    throw FatalError(path + ":" + std::to_string(type->line) + ": model '" + name + "' has type '" +
                     type->value + "', expected 'AOTIModel': compile it first with neml2-compile");
  const auto * ap = block->field("artifact_path");
  if (!ap)
    throw FatalError(where + " has no 'artifact_path'");
  StubEntry e;
  e.file = path;
  e.model = name;
  e.artifact_folder = std::filesystem::path(path).parent_path() / ap->value;
  return e;
}
} // namespace neml2::aoti
