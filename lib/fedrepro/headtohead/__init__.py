"""The head-to-head part: the three papers' private algorithms on the same tasks, calibrated by one
accountant (:mod:`.accounting`) to the same (ε, δ), under the same uplink-bit budget."""
