// A small reader of HIT, the block format of NEML2's input files: the subset the stub
// files that neml2-compile writes use (blocks, fields, comments, quoted values).
#pragma once

#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "neml2/aoti/Exception.h"

namespace neml2::aoti
{
/**
 * @brief One `[name] ... []` block of a HIT file, with its fields and sub-blocks.
 *
 * The stub reader understands the subset of HIT that stubs use: nested
 * sections, `key = value` with bare or quoted values, and `#` comments.
 */
struct HitSection
{
  /// @brief A `key = value` line.
  struct Field
  {
    std::string key;   ///< the key
    std::string value; ///< the value, quotes removed
    std::size_t line;  ///< 1-based line of the key
  };

  std::string name;                 ///< section name (empty for the root)
  std::size_t line = 0;             ///< 1-based line of the opening bracket
  std::vector<Field> fields;        ///< fields in file order
  std::vector<HitSection> sections; ///< sub-sections in file order

  /// @brief The sub-section called @p n, or nullptr.
  const HitSection * section(const std::string & n) const
  {
    for (const auto & s : sections)
      if (s.name == n)
        return &s;
    return nullptr;
  }

  /// @brief The field called @p key, or nullptr.
  const Field * field(const std::string & key) const
  {
    for (const auto & f : fields)
      if (f.key == key)
        return &f;
    return nullptr;
  }
};

/**
 * @brief Parse HIT text; errors are FatalError "file:line: what was expected".
 * @param text the file's contents
 * @param file the name used in error messages
 */
inline HitSection
parse_hit(const std::string & text, const std::string & file)
{
  HitSection root;
  std::vector<HitSection *> stack{&root};
  std::istringstream in(text);
  std::string raw;
  std::size_t lineno = 0;
  auto fail = [&](const std::string & what)
  { throw FatalError(file + ":" + std::to_string(lineno) + ": " + what); };
  auto trim = [](std::string s)
  {
    const auto b = s.find_first_not_of(" \t\r");
    if (b == std::string::npos)
      return std::string();
    const auto e = s.find_last_not_of(" \t\r");
    return s.substr(b, e - b + 1);
  };

  while (std::getline(in, raw))
  {
    ++lineno;
    // Strip a comment, ignoring '#' inside quotes.
    std::string line;
    char quote = 0;
    for (char c : raw)
    {
      if (quote)
      {
        if (c == quote)
          quote = 0;
      }
      else if (c == '\'' || c == '"')
        quote = c;
      else if (c == '#')
        break;
      line += c;
    }
    if (quote)
      fail(std::string("unterminated ") + (quote == '\'' ? "single" : "double") + " quote");
    line = trim(line);
    if (line.empty())
      continue;

    if (line.front() == '[')
    {
      if (line.back() != ']')
        fail("expected ']' to close the section header");
      const std::string name = trim(line.substr(1, line.size() - 2));
      if (name.empty() || name == "../")
      {
        if (stack.size() == 1)
          fail("'[]' closes a section that was never opened");
        stack.pop_back();
        continue;
      }
      if (name.find_first_of(" \t[]'\"=") != std::string::npos)
        fail("invalid section name '" + name + "'");
      HitSection s;
      s.name = name.rfind("./", 0) == 0 ? name.substr(2) : name;
      s.line = lineno;
      stack.back()->sections.push_back(std::move(s));
      stack.push_back(&stack.back()->sections.back());
      continue;
    }

    const auto eq = line.find('=');
    if (eq == std::string::npos)
      fail("expected 'key = value' or a section header, found '" + line + "'");
    const std::string key = trim(line.substr(0, eq));
    std::string value = trim(line.substr(eq + 1));
    if (key.empty() || key.find_first_of(" \t'\"") != std::string::npos)
      fail("invalid key '" + key + "'");
    if (value.empty())
      fail("expected a value after '" + key + " ='");
    if (value.front() == '\'' || value.front() == '"')
    {
      if (value.size() < 2 || value.back() != value.front())
        fail("expected the quoted value of '" + key + "' to end the line");
      value = value.substr(1, value.size() - 2);
    }
    else if (value.find_first_of(" \t") != std::string::npos)
      fail("a value with spaces must be quoted: " + key + " = '" + value + "'");
    if (stack.back()->field(key))
      fail("duplicate key '" + key + "'");
    stack.back()->fields.push_back({key, value, lineno});
  }
  if (stack.size() != 1)
    throw FatalError(file + ":" + std::to_string(stack.back()->line) + ": section [" +
                     stack.back()->name + "] is never closed with []");
  return root;
}

} // namespace neml2::aoti
