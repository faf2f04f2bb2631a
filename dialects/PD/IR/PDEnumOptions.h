//===- PDEnumOptions.h - pd enums as command-line choices -------*- C++ -*-===//
//
// The schedule and optimizer enums (PDEnums.td) as llvm::cl choices, spelled
// with the enums' own strings: pdc's flags, the pass options of
// pd-allocate-buffers and pd-training-pipeline, plan.json and the IR's
// #pd.schedule / #pd.optimizer all use one table.
//
//===----------------------------------------------------------------------===//

#ifndef PD_DIALECT_PD_IR_PDENUMOPTIONS_H
#define PD_DIALECT_PD_IR_PDENUMOPTIONS_H

#include "dialects/PD/IR/PDDialect.h"
#include "llvm/Support/CommandLine.h"

#include <initializer_list>
#include <utility>

namespace mlir::pd {

/// A cl modifier (like cl::values) adding one literal per enum value,
/// named by the enum's stringify function.
template <typename E>
class EnumChoices {
public:
  using Stringify = llvm::StringRef (*)(E);
  EnumChoices(Stringify stringify,
              std::initializer_list<std::pair<E, const char *>> choices)
      : stringify(stringify), choices(choices) {}

  template <class Opt>
  void apply(Opt &option) const {
    for (const auto &[value, help] : choices)
      option.getParser().addLiteralOption(stringify(value), value, help);
  }

private:
  Stringify stringify;
  llvm::SmallVector<std::pair<E, const char *>, 4> choices;
};

/// --schedule: 2bw, flush or gpipe.
inline EnumChoices<Schedule> scheduleChoices() {
  return {stringifySchedule,
          {{Schedule::TwoBW, "PipeDream-2BW: 1F1B, no flushes, two weight "
                             "versions"},
           {Schedule::Flush, "PipeDream-Flush: 1F1B with a flush per batch"},
           {Schedule::GPipe, "GPipe: all forwards, then all backwards"}}};
}

/// --optimizer: sgd, momentum, adam or adamw.
inline EnumChoices<Optimizer> optimizerChoices() {
  return {stringifyOptimizer,
          {{Optimizer::SGD, "plain SGD"},
           {Optimizer::Momentum, "SGD with momentum"},
           {Optimizer::Adam, "Adam"},
           {Optimizer::AdamW, "Adam with decoupled weight decay"}}};
}

/// Optimizer state tensors a parameter carries under `optimizer`.
inline int64_t optimizerStateTensors(Optimizer optimizer) {
  switch (optimizer) {
  case Optimizer::SGD:
    return 0;
  case Optimizer::Momentum:
    return 1;
  case Optimizer::Adam:
  case Optimizer::AdamW:
    return 2;
  }
  return 0;
}

} // namespace mlir::pd

#endif // PD_DIALECT_PD_IR_PDENUMOPTIONS_H
