// Options of the COMET model: the corrected model is the default; `reference()` turns on every
// quirk of the reference implementation (comet-model.md §8) so that its runs reproduce to the
// cycle.
#pragma once

namespace yirage::costmodel::comet {

struct Options {
  /// #7: tensors sharing a (memory, port) consume the overlap window one after another in
  /// tensor order, and the per-iteration stall of a memory's write port overwrites its read
  /// port's from the second iteration on. Corrected: OS_i = max(0, sum_j t_ij - W_i) per
  /// (memory, port), and the node stall is the max over (memory, port).
  bool ordered_port_windows = false;
  /// #4: the reduction arithmetic of a collective runs on a SIMD unit of hard-coded width 16.
  /// Corrected: the widest SIMD compute type of the architecture.
  bool simd_width_16 = false;
  /// #12: SIMD and memory energies count the spatial instances above a node by matching the
  /// tags and tensors of its spatial ancestors. Corrected: the product of all spatial factors
  /// above the node.
  bool instances_by_tag = false;
  /// Child-side access energy of a broadcast counts one tile, not one per receiving child;
  /// NoC energy is left out under the root's children and is not multiplied by the instances
  /// that do the same transfer. Corrected: every child's write is charged, every instance's
  /// NoC transfer is charged.
  bool reference_energy_counts = false;
  /// A spatial tensor entry that its parent tile lacks follows the iterations of the parent's
  /// previous entry (an uninitialised index in the reference). Corrected: the parent's loop
  /// walked over the tensor's own projection.
  bool parent_entry_quirk = false;
  /// Fit check: tiles count once even in a double-buffered memory whose node prefetches (the
  /// reference's Validate::fitsInMemory). Corrected: twice.
  bool single_buffer_fit = false;
  /// E6: pipelined, parallel and sharing siblings that together keep one (memory, port) busy
  /// longer than the pipeline's conflict-free time L_wo pay the excess as conflict stalls,
  /// reported in their own rows ("CONFLICT-OB"). Off in reference mode: its pipelined path is
  /// E5 as comet-model.md §2.5 states it, not the reference's, so there is no run to match.
  bool conflict_stalls = true;
  /// Add the ORION/HISIM NoC energy of implicit and explicit collectives (--calc_noc_energy).
  bool noc_energy = true;
  /// Clock, only to convert cycles to seconds (comet-model.md §8 #2).
  double freq_ghz = 1.0;

  /// Every quirk of the reference implementation on.
  static Options reference() {
    Options o;
    o.ordered_port_windows = true;
    o.simd_width_16 = true;
    o.instances_by_tag = true;
    o.reference_energy_counts = true;
    o.parent_entry_quirk = true;
    o.single_buffer_fit = true;
    o.conflict_stalls = false;
    return o;
  }
};

}  // namespace yirage::costmodel::comet
