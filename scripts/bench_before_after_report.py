"""The table of scripts/bench_before_after.sh: best of all rounds per side and operation,
as a Markdown table (usage: bench_before_after_report.py OUT_DIR)."""
import json, glob, sys
D = sys.argv[1] if len(sys.argv) > 1 else '/tmp/ab'
keys = [('read_mibs', 'read MiB/s', 1), ('read_reused_mibs', 'read reused MiB/s', 1),
        ('slice_us', 'slice 10 items us', -1), ('write_mibs', 'write MiB/s', 1),
        ('npy_devnull_mibs', 'to-npy /dev/null MiB/s', 1), ('npy_shm_mibs', 'to-npy tmpfs MiB/s', 1),
        ('npy_disk_mibs', 'to-npy disk MiB/s', 1)]
side = {}
for s in ('base', 'new'):
    best = {}
    for f in sorted(glob.glob(f'{D}/{s}_*.json')):
        d = json.load(open(f))['files']
        for name, v in d.items():
            for k, _, sign in keys:
                if k not in v or v[k] is None: continue
                x = v[k]
                b = best.setdefault(name, {})
                if k not in b or (x > b[k] if sign > 0 else x < b[k]): b[k] = x
    side[s] = best
print('| file | operation | before | after | after / before |')
print('|---|---|---|---|---|')
for name in side['base']:
    for k, label, sign in keys:
        if k not in side['base'][name] or k not in side['new'].get(name, {}): continue
        a, b = side['base'][name][k], side['new'][name][k]
        r = b / a if sign > 0 else a / b
        print(f'| {name} | {label} | {a:.1f} | {b:.1f} | {r:.2f}x |')
