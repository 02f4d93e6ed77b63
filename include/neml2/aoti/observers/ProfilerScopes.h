// An observer that shows dispatches to torch's profiler.
#pragma once

#include <map>
#include <memory>
#include <string>

#include <ATen/record_function.h>

#include "neml2/aoti/Observer.h"

namespace neml2::aoti
{
/**
 * @brief Opens a torch-profiler scope (RECORD_FUNCTION) per call and per chunk, so that
 * dispatches appear in `torch::autograd::profiler` and Kineto traces beside torch's ops:
 * "neml2::forward" for a call, "neml2::chunk" for each chunk. Costs a thread-local check
 * per scope when no profiler runs.
 */
class ProfilerScopes : public DispatchObserver
{
public:
  /// @copydoc DispatchObserver::on_dispatch
  void on_dispatch(Graph graph, int64_t) override { begin_scope(call_scope(), call_name(graph)); }
  /// @copydoc DispatchObserver::on_chunk_begin
  void on_chunk_begin(const ChunkInfo &) override { begin_scope(chunk_scope(), "neml2::chunk"); }
  /// @copydoc DispatchObserver::on_chunk_end
  void on_chunk_end(const ChunkInfo &, const ChunkTiming *) override { chunk_scope().reset(); }
  /// @copydoc DispatchObserver::on_error
  void on_error(const ChunkInfo &, const std::exception &) override { chunk_scope().reset(); }
  /// @copydoc DispatchObserver::on_dispatch_end
  void on_dispatch_end(Graph, const DispatchInfo &, bool) override { call_scope().reset(); }

private:
  using Scope = std::unique_ptr<at::RecordFunction>;
  static Scope & call_scope()
  {
    thread_local Scope s;
    return s;
  }
  static Scope & chunk_scope()
  {
    thread_local Scope s;
    return s;
  }
  static void begin_scope(Scope & scope, const char * name)
  {
    scope.reset();
    auto s = std::make_unique<at::RecordFunction>(at::RecordScope::USER_SCOPE);
    if (!s->isActive())
      return;
    s->before(name);
    scope = std::move(s);
  }
  // "neml2::" and the graph's name; the strings live as long as the program.
  static const char * call_name(Graph graph)
  {
    static const std::map<Graph, std::string> names = []
    {
      std::map<Graph, std::string> m;
      for (const Graph g : all_graphs)
        m[g] = std::string("neml2::") + graph_name(g);
      return m;
    }();
    return names.at(graph).c_str();
  }
};
} // namespace neml2::aoti
