import glob,re,collections
tot=collections.defaultdict(lambda: dict(cpu=0.0,wall=0,execs=0,cov=0,ft=0,corp=0,runs=0,oom=0,crash=0,timeout=0))
for f in sorted(glob.glob('/work/main/fuzz/logs/*.log')):
    t=f.split('/')[-1].split('.')[0]
    s=open(f).read()
    lines=[l for l in s.splitlines() if re.match(r'^#\d+:',l)]
    if not lines: continue
    last=lines[-1]
    m=re.match(r'^#(\d+): cov: (\d+) ft: (\d+) corp: (\d+).*oom/timeout/crash: (\d+)/(\d+)/(\d+) time: (\d+)s',last)
    d=tot[t]; d['runs']+=1
    d['execs']+=int(m.group(1)); d['cov']=max(d['cov'],int(m.group(2))); d['ft']=max(d['ft'],int(m.group(3))); d['corp']=max(d['corp'],int(m.group(4)))
    d['oom']+=int(m.group(5)); d['timeout']+=int(m.group(6)); d['crash']+=int(m.group(7)); d['wall']+=int(m.group(8))
    c=re.search(r'cpu_seconds ([\d.]+) user ([\d.]+) sys',s)
    if c: d['cpu']+=float(c.group(1))+float(c.group(2))
    else: d['cpu_missing']=d.get('cpu_missing',0)+int(m.group(8))
allcpu=0
print("| target | runs | CPU s (user+sys) | wall s | executions | coverage (edges) | features | corpus | oom/timeout/crash |")
print("|---|---|---|---|---|---|---|---|---|")
for t,d in sorted(tot.items()):
    allcpu+=d['cpu']
    miss=f" (+{d['cpu_missing']} s running)" if d.get('cpu_missing') else ""
    print(f"| `{t}` | {d['runs']} | {d['cpu']:.0f}{miss} | {d['wall']} | {d['execs']:,} | {d['cov']:,} | {d['ft']:,} | {d['corp']:,} | {d['oom']}/{d['timeout']}/{d['crash']} |")
print("total CPU s:", round(allcpu), "=", round(allcpu/3600,2), "h")
