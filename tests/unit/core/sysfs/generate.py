#!/usr/bin/env python3
"""Regenerates the fake sysfs trees used by thread_plan_test.cc (run from this folder).

epyc-8ccx: 24 cores x 2 SMT threads (cpu k and k+24 are siblings), 8 L3 domains (CCX) of 3
           cores = 6 CPUs each, like an EPYC 74F3; scaling_max_freq only, one NUMA node.
hybrid:    8 CPUs, no SMT, one shared L3; cluster 0-3 with cpu_capacity 1024 and cluster 4-7
           with 512 (big.LITTLE).
nocache:   cpu/online only (no cache, topology or node files), 4 CPUs.
"""
import os
import shutil


def put(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text + "\n")


def cache(root, cpu, idx, level, kind, shared):
    base = f"devices/system/cpu/cpu{cpu}/cache/index{idx}"
    put(root, f"{base}/level", str(level))
    put(root, f"{base}/type", kind)
    put(root, f"{base}/shared_cpu_list", shared)


def epyc(root):
    put(root, "devices/system/cpu/online", "0-47")
    for cpu in range(48):
        core = cpu % 24
        ccx = core // 3
        sib = f"{core},{core + 24}"
        cache(root, cpu, 0, 1, "Data", sib)
        cache(root, cpu, 1, 1, "Instruction", sib)
        cache(root, cpu, 2, 2, "Unified", sib)
        cache(root, cpu, 3, 3, "Unified", f"{3 * ccx}-{3 * ccx + 2},{24 + 3 * ccx}-{24 + 3 * ccx + 2}")
        t = f"devices/system/cpu/cpu{cpu}/topology"
        put(root, f"{t}/thread_siblings_list", sib)
        put(root, f"{t}/core_siblings_list", "0-47")
        put(root, f"{t}/package_cpus_list", "0-47")
        put(root, f"{t}/physical_package_id", "0")
        put(root, f"devices/system/cpu/cpu{cpu}/cpufreq/scaling_max_freq", "3200000")
    put(root, "devices/system/node/node0/cpulist", "0-47")


def hybrid(root):
    put(root, "devices/system/cpu/online", "0-7")
    for cpu in range(8):
        big = cpu < 4
        cache(root, cpu, 0, 1, "Data", str(cpu))
        cache(root, cpu, 1, 1, "Instruction", str(cpu))
        cache(root, cpu, 2, 3, "Unified", "0-7")
        t = f"devices/system/cpu/cpu{cpu}/topology"
        put(root, f"{t}/thread_siblings_list", str(cpu))
        put(root, f"{t}/cluster_cpus_list", "0-3" if big else "4-7")
        put(root, f"{t}/package_cpus_list", "0-7")
        put(root, f"devices/system/cpu/cpu{cpu}/cpu_capacity", "1024" if big else "512")
    put(root, "devices/system/node/node0/cpulist", "0-7")


def nocache(root):
    put(root, "devices/system/cpu/online", "0-3")


for name, fn in (("epyc-8ccx", epyc), ("hybrid", hybrid), ("nocache", nocache)):
    shutil.rmtree(name, ignore_errors=True)
    fn(name)
