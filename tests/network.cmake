# SPDX-License-Identifier: MIT
# cluster.topology and the NCCL collective model (issue 30): included by tests/CMakeLists.txt's *.cmake glob.
add_core_test(tst_network LIBS core_simulate core_estimate core_config)
