// The smallest host program (the README's quickstart): load the compiled elastic model of
// tests/aoti/forward_single and evaluate a batch of strains in chunks on the CPU.
//
//   neml2-compile tests/aoti/forward_single/model.i --model model --device cpu -d : -o aoti
//   consumer aoti/model_aoti.i
#include <cstdio>
#include <iostream>
#include <string>

#include "neml2/aoti.h"

using namespace neml2::aoti;

int
main(int argc, char ** argv)
{
  const std::string stub = argc > 1 ? argv[1] : "aoti/model_aoti.i";
  try
  {
    // Chunks of 4096 points on the CPU; Config{"cuda", 65536} would run them on a GPU.
    auto sched = std::make_shared<Simple>(Simple::Config{"cpu", 4096});
    auto model = load_model(stub, "model", sched);

    // 10000 material points, each strain a Mandel 6-vector.
    const TensorMap inputs{{"strain", at::full({10000, 6}, 1e-3, at::kDouble)}};
    const TensorMap out = model.forward(inputs);

    const at::Tensor stress = out.at("stress");
    std::printf("%s: stress %s in %zu chunks\n", model.meta().type.c_str(),
                c10::str(stress.sizes()).c_str(), model.last_dispatch().chunks);
    std::printf("point 0:");
    for (int i = 0; i < 6; ++i)
      std::printf(" %.4f", stress[0][i].item<double>());
    std::printf("\n");
  }
  catch (const Exception & e) // every library error: ConvergenceError, FatalError, ...
  {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
