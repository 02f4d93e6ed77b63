// AnyDispatchedModel: one type for every execution policy, chosen at run time.
#pragma once

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "neml2/aoti/DispatchedModel.h"

namespace neml2::aoti
{
/**
 * @brief A type-erased DispatchedModel, for hosts that pick the policy at run time.
 *
 * Holds any `DispatchedModel<P>` and forwards the same entry points through one
 * virtual call (negligible next to a graph call).
 *
 * @code
 * std::shared_ptr<Scheduler> s;
 * if (hybrid) s = std::make_shared<StaticHybrid>(hybrid_cfg);
 * else        s = std::make_shared<Simple>(Simple::Config{"cpu", 4096});
 * AnyDispatchedModel m = load_model("aoti/model_aoti.i", "model", s);
 * auto out = m.forward(inputs);
 * @endcode
 *
 * @par Thread safety
 * As the DispatchedModel it holds: one thread at a time per handle for calls and changes;
 * separate handles may be called from separate threads at once.
 */
class AnyDispatchedModel
{
public:
  /// @brief Take ownership of @p model.
  template <class P>
  AnyDispatchedModel(DispatchedModel<P> && model) // NOLINT(google-explicit-constructor)
      : _impl(std::make_unique<Holder<P>>(std::move(model)))
  {
  }

  /// @copydoc DispatchedModel::forward
  TensorMap forward(const TensorMap & inputs) { return _impl->forward(inputs); }
  /// @copydoc DispatchedModel::jvp
  TensorMap jvp(const TensorMap & inputs, const TensorMap & tangents)
  {
    return _impl->jvp(inputs, tangents);
  }
  /// @copydoc DispatchedModel::jacobian
  DerivMap jacobian(const TensorMap & inputs) { return _impl->jacobian(inputs); }
  /// @copydoc DispatchedModel::param_jacobian
  DerivMap param_jacobian(const TensorMap & inputs) { return _impl->param_jacobian(inputs); }
  /// @copydoc DispatchedModel::param_vjp
  TensorMap param_vjp(const TensorMap & inputs, const TensorMap & cotangents)
  {
    return _impl->param_vjp(inputs, cotangents);
  }
  /// @brief DispatchedModel::forward into caller-owned @p results.
  void forward(const TensorMap & inputs, TensorMap & results) { _impl->forward(inputs, results); }
  /// @brief DispatchedModel::jvp into caller-owned @p results.
  void jvp(const TensorMap & inputs, const TensorMap & tangents, TensorMap & results)
  {
    _impl->jvp(inputs, tangents, results);
  }
  /// @brief DispatchedModel::jacobian into caller-owned @p results.
  void jacobian(const TensorMap & inputs, DerivMap & results) { _impl->jacobian(inputs, results); }
  /// @brief DispatchedModel::param_jacobian into caller-owned @p results.
  void param_jacobian(const TensorMap & inputs, DerivMap & results)
  {
    _impl->param_jacobian(inputs, results);
  }
  /// @brief DispatchedModel::param_vjp into caller-owned @p results.
  void param_vjp(const TensorMap & inputs, const TensorMap & cotangents, TensorMap & results)
  {
    _impl->param_vjp(inputs, cotangents, results);
  }
  /// @copydoc DispatchedModel::release_buffers
  void release_buffers() { _impl->release_buffers(); }
  /// @copydoc DispatchedModel::named_parameters
  TensorMap & named_parameters() { return _impl->named_parameters(); }
  /// @copydoc DispatchedModel::set_parameter
  void set_parameter(const std::string & name, const at::Tensor & value)
  {
    _impl->set_parameter(name, value);
  }
  /// @copydoc DispatchedModel::meta
  const Meta & meta() const { return _impl->meta(); }
  /// @copydoc DispatchedModel::inputs
  const std::vector<VariableSpec> & inputs() const { return _impl->meta().inputs; }
  /// @copydoc DispatchedModel::outputs
  const std::vector<VariableSpec> & outputs() const { return _impl->meta().outputs; }
  /// @copydoc DispatchedModel::parameters
  std::vector<ParameterInfo> parameters() const { return _impl->parameters(); }
  /// @brief The run-time settings of the model's Newton solves, by solver
  /// (DispatchedModel::solver_settings()).
  const std::map<std::string, SolverSettings> & solver_settings() const
  {
    return _impl->solver_settings();
  }
  /// @brief Change the tolerances and iteration cap of @p solver on every device
  /// (DispatchedModel::set_solver_settings()).
  void set_solver_settings(const std::string & solver, const SolverSettings & settings)
  {
    _impl->set_solver_settings(solver, settings);
  }
  /// @copydoc DispatchedModel::last_dispatch
  const DispatchInfo & last_dispatch() const { return _impl->last_dispatch(); }
  /// @copydoc DispatchedModel::set_chunk_hook
  void set_chunk_hook(ChunkHook hook) { _impl->set_chunk_hook(std::move(hook)); }
  /// @copydoc DispatchedModel::set_trace
  void set_trace(const std::string & path) { _impl->set_trace(path); }
  /// @copydoc DispatchedModel::add_observer
  void add_observer(std::shared_ptr<DispatchObserver> observer)
  {
    _impl->add_observer(std::move(observer));
  }
  /// @copydoc DispatchedModel::remove_observer
  void remove_observer(const std::shared_ptr<DispatchObserver> & observer)
  {
    _impl->remove_observer(observer);
  }
  /// @brief Whether chunks run on a thread per device.
  bool asynchronous() const { return _impl->asynchronous(); }

private:
  struct Concept
  {
    virtual ~Concept() = default;
    virtual TensorMap forward(const TensorMap &) = 0;
    virtual TensorMap jvp(const TensorMap &, const TensorMap &) = 0;
    virtual DerivMap jacobian(const TensorMap &) = 0;
    virtual DerivMap param_jacobian(const TensorMap &) = 0;
    virtual TensorMap param_vjp(const TensorMap &, const TensorMap &) = 0;
    virtual void forward(const TensorMap &, TensorMap &) = 0;
    virtual void jvp(const TensorMap &, const TensorMap &, TensorMap &) = 0;
    virtual void jacobian(const TensorMap &, DerivMap &) = 0;
    virtual void param_jacobian(const TensorMap &, DerivMap &) = 0;
    virtual void param_vjp(const TensorMap &, const TensorMap &, TensorMap &) = 0;
    virtual void release_buffers() = 0;
    virtual TensorMap & named_parameters() = 0;
    virtual void set_parameter(const std::string &, const at::Tensor &) = 0;
    virtual const Meta & meta() const = 0;
    virtual std::vector<ParameterInfo> parameters() const = 0;
    virtual const std::map<std::string, SolverSettings> & solver_settings() const = 0;
    virtual void set_solver_settings(const std::string & solver, const SolverSettings & s) = 0;
    virtual const DispatchInfo & last_dispatch() const = 0;
    virtual bool asynchronous() const = 0;
    virtual void set_chunk_hook(ChunkHook) = 0;
    virtual void set_trace(const std::string &) = 0;
    virtual void add_observer(std::shared_ptr<DispatchObserver>) = 0;
    virtual void remove_observer(const std::shared_ptr<DispatchObserver> &) = 0;
  };

  template <class P> struct Holder final : Concept
  {
    explicit Holder(DispatchedModel<P> && m) : model(std::move(m)) {}
    TensorMap forward(const TensorMap & in) override { return model.forward(in); }
    TensorMap jvp(const TensorMap & in, const TensorMap & t) override { return model.jvp(in, t); }
    DerivMap jacobian(const TensorMap & in) override { return model.jacobian(in); }
    DerivMap param_jacobian(const TensorMap & in) override { return model.param_jacobian(in); }
    TensorMap param_vjp(const TensorMap & in, const TensorMap & c) override
    {
      return model.param_vjp(in, c);
    }
    void forward(const TensorMap & in, TensorMap & r) override { model.forward(in, r); }
    void jvp(const TensorMap & in, const TensorMap & t, TensorMap & r) override
    {
      model.jvp(in, t, r);
    }
    void jacobian(const TensorMap & in, DerivMap & r) override { model.jacobian(in, r); }
    void param_jacobian(const TensorMap & in, DerivMap & r) override
    {
      model.param_jacobian(in, r);
    }
    void param_vjp(const TensorMap & in, const TensorMap & c, TensorMap & r) override
    {
      model.param_vjp(in, c, r);
    }
    void release_buffers() override { model.release_buffers(); }
    TensorMap & named_parameters() override { return model.named_parameters(); }
    void set_parameter(const std::string & name, const at::Tensor & value) override
    {
      model.set_parameter(name, value);
    }
    const Meta & meta() const override { return model.meta(); }
    std::vector<ParameterInfo> parameters() const override { return model.parameters(); }
    const std::map<std::string, SolverSettings> & solver_settings() const override
    {
      return model.solver_settings();
    }
    void set_solver_settings(const std::string & solver, const SolverSettings & s) override
    {
      model.set_solver_settings(solver, s);
    }
    const DispatchInfo & last_dispatch() const override { return model.last_dispatch(); }
    void set_chunk_hook(ChunkHook h) override { model.set_chunk_hook(std::move(h)); }
    void set_trace(const std::string & path) override { model.set_trace(path); }
    void add_observer(std::shared_ptr<DispatchObserver> o) override
    {
      model.add_observer(std::move(o));
    }
    void remove_observer(const std::shared_ptr<DispatchObserver> & o) override
    {
      model.remove_observer(o);
    }
    bool asynchronous() const override { return P::asynchronous; }
    DispatchedModel<P> model;
  };

  std::unique_ptr<Concept> _impl;
};
} // namespace neml2::aoti
