// The private members of DispatchedModel, defined apart from its interface: the dispatch
// itself (prepare; a short circuit, or chunks through the policy and a Gather), the
// parameter refresh and the pass-through path. Included at the end of DispatchedModel.h.
#pragma once

namespace neml2::aoti
{
template <class Policy>
inline void
DispatchedModel<Policy>::sync_parameters()
{
  const Meta & m = meta();
  detail::check_parameter_names(m, _s->master);
  const std::optional<at::Device> any_device; // the master map may be on any device
  for (std::size_t i = 0; i < _s->models.size(); ++i)
  {
    Model & model = *_s->models[i];
    for (const auto & spec : m.parameters)
    {
      const at::Tensor & t = detail::checked_parameter(m, _s->master, spec, any_device);
      // One value per point: sliced with each chunk (detail::prepare), never copied whole.
      if (t.dim() > int64_t(spec.shape.size()))
        continue;
      const std::pair<const void *, int64_t> key{t.unsafeGetTensorImpl(),
                                                 t.is_inference() ? -1 : t._version()};
      auto & last = _s->synced[i][spec.name];
      if (key.second >= 0 && last == key)
        continue;
      if (model.device() == t.device())
        model.named_parameters()[spec.name] = t; // share, no copy
      else
        model.named_parameters()[spec.name] = t.to(model.device());
      last = key;
      ++_s->info.parameter_syncs;
    }
  }
}

template <class Policy>
inline detail::Named
DispatchedModel<Policy>::dispatch(Graph g, const TensorMap & inputs, const TensorMap * extra,
                                  const detail::Into & into)
{
  if (_s->observers.empty())
    return dispatch_impl(g, inputs, extra, into);
  bool begun = false; // on_dispatch was called: on_dispatch_end must follow
  detail::Named out;
  try
  {
    out = dispatch_impl(g, inputs, extra, into, &begun);
  }
  catch (const Exception &)
  {
    if (begun)
      _s->observers.end(g, _s->info, true);
    throw;
  }
  guard([this] { return detail::who(meta()); },
        [&]
        {
          _s->observers.end(g, _s->info, false);
          return 0;
        });
  return out;
}

template <class Policy>
inline std::vector<at::Tensor>
DispatchedModel<Policy>::run_chunk(const Model & model, const detail::Call & call,
                                   std::size_t ordinal, int64_t begin, int64_t end, Gather * gather,
                                   const std::vector<at::Tensor> * whole)
{
  std::vector<at::Tensor> rows;
  if (gather && model.writes_into(call))
    rows = gather->destinations(begin, end, model.device());
  const std::vector<at::Tensor> * into = whole ? whole : rows.empty() ? nullptr : &rows;
  // With an observer (t), each phase is stamped once the device has finished it.
  const auto stamp = [&model](ChunkTiming * t, double ChunkTiming::*when)
  {
    if (!t)
      return;
    detail::sync_stream(model.device());
    t->*when = observer_clock_us();
  };
  const auto run = [&](ChunkTiming * t)
  {
    const auto args = model.stage(call, begin, end);
    stamp(t, &ChunkTiming::staged);
    auto returns = model.execute(call, args, begin, end, into);
    stamp(t, &ChunkTiming::computed);
    if (gather)
    {
      gather->add(ordinal, begin, end, returns);
      stamp(t, &ChunkTiming::gathered);
    }
    return returns;
  };
  if (_s->observers.empty())
    return run(nullptr);
  // A short circuit (no gather) reports its own error; a policy's handler reports the others.
  return _s->observers.chunk(ChunkInfo{model.device(), ordinal, begin, end}, !gather, true, run);
}

template <class Policy>
inline detail::Named
DispatchedModel<Policy>::dispatch_impl(Graph g, const TensorMap & inputs, const TensorMap * extra,
                                       const detail::Into & into, bool * begun)
{
  const Meta & m = meta();
  if (!into.map && !into.deriv)
    return run_call(g, inputs, extra, nullptr, begun);
  return guard([&m] { return detail::who(m); },
               [&]
               {
                 detail::Bound bound{detail::prepare(m, g, inputs, extra, &named_parameters()), {}};
                 bound.targets = detail::bind_results(m, bound.call, into);
                 detail::deliver(run_call(g, inputs, extra, &bound, begun), into);
                 return detail::Named{};
               });
}

template <class Policy>
inline detail::Named
DispatchedModel<Policy>::run_call(Graph g, const TensorMap & inputs, const TensorMap * extra,
                                  const detail::Bound * bound, bool * begun)
{
  const Meta & m = meta();
  return guard(
      [&m] { return detail::who(m); },
      [&]
      {
        _s->info = DispatchInfo{};
        _s->info.device_chunks.assign(_s->models.size(), 0);
        if constexpr (pass_through)
        {
          Model & first = *_s->models.front();
          _s->info.short_circuit = true;
          if (_s->observers.empty())
            return call_model(first, g, inputs, extra);
          const int64_t batch =
              detail::prepare(m, g, inputs, extra, &first.named_parameters()).batch;
          begin_dispatch(g, batch, begun);
          return _s->observers.chunk(ChunkInfo{first.device(), 0, 0, batch}, true, false,
                                     [&](ChunkTiming *)
                                     { return call_model(first, g, inputs, extra); });
        }
        else
        {
          std::optional<detail::Call> own;
          const detail::Call & call =
              bound ? bound->call
                    : own.emplace(detail::prepare(m, g, inputs, extra, &named_parameters()));
          const std::vector<at::Tensor> * targets = bound ? &bound->targets : nullptr;
          sync_parameters();
          begin_dispatch(g, call.batch, begun);
          const auto & sched = _s->policy->scheduler();
          if (call.batch == 0)
            return detail::finish(call, detail::empty_returns(m, call));
          const std::uint64_t client = _s->policy->client();
          const auto start = std::chrono::steady_clock::now();
          const auto timed = [&](detail::Named out)
          {
            const std::chrono::duration<double> took = std::chrono::steady_clock::now() - start;
            sched.observe_dispatch(client, call.batch, took.count());
            return out;
          };
          const auto whole = sched.short_circuit(client, call.batch, call.device);
          if (whole && *whole < _s->models.size() && _s->models[*whole]->device() == call.device)
          {
            _s->info.short_circuit = true;
            const Model & model = *_s->models[*whole];
            if constexpr (Policy::asynchronous)
              if (model.device().is_cpu())
                _s->policy->release_idle_threads(); // the lanes' idle teams slow its regions
            const auto buffers = whole_buffers(model, call, targets);
            return timed(detail::finish(call, run_chunk(model, call, 0, 0, call.batch, nullptr,
                                                        buffers.empty() ? nullptr : &buffers)));
          }
          bool gpu = false;
          for (const auto & model : _s->models)
            gpu = gpu || model->device().is_cuda();
          Gather gather(m, call, gpu, targets, &_s->pool);
          auto & info = _s->info;
          std::mutex info_mutex;
          _s->policy->execute(
              call.batch,
              [&](std::size_t dev, std::size_t ordinal, int64_t begin, int64_t end)
              {
                const Model & model = *_s->models[dev];
                try
                {
                  run_chunk(model, call, ordinal, begin, end, &gather);
                }
                catch (...)
                {
                  const std::string where = detail::who(m) + " on " + model.device().str() +
                                            ", rows [" + std::to_string(begin) + ", " +
                                            std::to_string(end) + ")";
                  if (_s->observers.empty())
                    rethrow_normalized(where);
                  try
                  {
                    rethrow_normalized(where);
                  }
                  catch (const std::exception & e)
                  {
                    _s->observers.error(ChunkInfo{model.device(), ordinal, begin, end}, e);
                    throw;
                  }
                }
                const std::lock_guard<std::mutex> lock(info_mutex);
                ++info.device_chunks[dev];
              });
          for (const auto n : info.device_chunks)
            info.chunks += n;
          return timed(detail::finish(call, gather.finish()));
        }
      });
}

/**
 * The buffers a short circuit on @p model stores its per-point returns in, when its graph
 * has an in-place variant: the caller's (@p targets) where given, else the model's own
 * reused host buffers. None (the graph allocates its returns) when the call is unbatched or
 * a caller's buffer is not contiguous.
 */
template <class Policy>
inline std::vector<at::Tensor>
DispatchedModel<Policy>::whole_buffers(const Model & model, const detail::Call & call,
                                       const std::vector<at::Tensor> * targets)
{
  std::vector<at::Tensor> out;
  if (!model.writes_into(call) || !call.batched || !model.device().is_cpu())
    return out;
  const Meta & m = meta();
  const auto opts = at::TensorOptions().dtype(m.dtype).device(model.device());
  for (const auto slot : model.written_slots(*call.spec))
  {
    if (targets && (*targets)[slot].defined())
    {
      if (!(*targets)[slot].is_contiguous())
        return {};
      out.push_back((*targets)[slot]);
      continue;
    }
    out.push_back(_s->pool.take(call.graph, slot, detail::result_shape(m, call, slot), opts));
  }
  return out;
}

template <class Policy>
inline void
DispatchedModel<Policy>::begin_dispatch(Graph g, int64_t batch, bool * begun)
{
  if (!begun || _s->observers.empty())
    return;
  *begun = true;
  for (auto * o : _s->observers.all())
    o->on_dispatch(g, batch);
}

template <class Policy>
inline detail::Named
DispatchedModel<Policy>::call_model(const Model & model, Graph g, const TensorMap & inputs,
                                    const TensorMap * extra)
{
  detail::Named out;
  switch (g)
  {
    case Graph::forward:
      out.map = model.forward(inputs);
      break;
    case Graph::jvp:
      out.map = model.jvp(inputs, *extra);
      break;
    case Graph::jacobian:
      out.deriv = model.jacobian(inputs);
      break;
    case Graph::param_jacobian:
      out.deriv = model.param_jacobian(inputs);
      break;
    case Graph::param_vjp:
      out.map = model.param_vjp(inputs, *extra);
      break;
  }
  return out;
}

} // namespace neml2::aoti
