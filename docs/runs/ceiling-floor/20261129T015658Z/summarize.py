import sys,glob,os,re
d=sys.argv[1]
for name in ('bridge','loopback','bridge-pipelined-4'):
    b=[l.split() for l in open(f'{d}/{name}-proc-stat-before.txt')]; a=[l.split() for l in open(f'{d}/{name}-proc-stat-after.txt')]
    h=open(f'{d}/{name}-h2load.txt').read()
    rate=re.search(r'finished in ([\d.]+)s, ([\d.]+) req/s',h); ok=re.search(r'(\d+) succeeded',h)
    hb=int(open(f'{d}/{name}-haproxy-cpuacct-before.txt').read()); ha=int(open(f'{d}/{name}-haproxy-cpuacct-after.txt').read())
    secs=float(rate.group(1)); rps=float(rate.group(2))
    cores=[]
    for x,y in zip(b,a):
        if x[0]=='cpu': continue
        dx=[int(j)-int(i) for i,j in zip(x[1:],y[1:])]; tot=sum(dx[:8])
        busy=(tot-dx[3]-dx[4])/tot*100
        cores.append(f"{x[0]} {busy:.0f}% busy (softirq {dx[6]/tot*100:.0f}%)")
    print(f"{name}: {rps:,.0f} requests/s over {secs:.1f} s; HAProxy's cgroup {(ha-hb)/1e9/secs*100:.0f}% of a core, {(ha-hb)/1e3/(rps*secs):.1f} µs per request; "+'; '.join(cores))
