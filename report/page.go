package report

import (
	"fmt"
	"html/template"
	"math"
)

var funcs = template.FuncMap{
	"sec": func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return formatSeconds(v)
	},
	"bw": func(v float64) string {
		if math.IsNaN(v) {
			return "–"
		}
		return formatBandwidth(v)
	},
	"f3": func(v float64) string { return fmt.Sprintf("%.3f", v) },
	// pct keeps two significant digits below 0.1 %: at 4096 ranks the
	// inference measures 0.04 % of the pairs, which "0.0 %" hides.
	"pct": func(v float64) string {
		if p := 100 * v; p > 0 && p < 0.095 {
			return fmt.Sprintf("%.2g %%", p)
		}
		return fmt.Sprintf("%.1f %%", 100*v)
	},
	"num": func(v float64) string { return trimNum(v) },
	// ratio of between to within (how much farther other groups are).
	"ratio": func(between, within float64) string {
		if math.IsNaN(between) || math.IsNaN(within) || within == 0 {
			return "–"
		}
		return fmt.Sprintf("%.2f×", between/within)
	},
	"add": func(a, b int) int { return a + b },
}

var pageTemplate = template.Must(template.New("report").Funcs(funcs).Parse(pageHTML))

const pageHTML = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>netaware report{{with .In.Title}} — {{.}}{{end}}</title>
<style>
:root{--ink:#1c2430;--muted:#5b6676;--line:#dde3ea;--bg:#f6f8fb;--accent:#1f3a5f;--warn:#c0392b;--good:#1e7d4f}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--ink);font:15px/1.55 -apple-system,BlinkMacSystemFont,"Segoe UI",Helvetica,Arial,"Liberation Sans",sans-serif}
header{background:var(--accent);color:#fff;padding:28px 0 22px}
.wrap{max-width:1180px;margin:0 auto;padding:0 24px}
header h1{margin:0 0 4px;font-size:26px;font-weight:650;letter-spacing:-.01em}
header .sub{opacity:.85;font-size:14px}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(160px,1fr));gap:12px;margin-top:18px}
.card{background:rgba(255,255,255,.1);border-radius:8px;padding:10px 14px}
.card b{display:block;font-size:20px;font-weight:650;font-variant-numeric:tabular-nums}
.card span{font-size:12px;opacity:.8;text-transform:uppercase;letter-spacing:.05em}
nav{background:#fff;border-bottom:1px solid var(--line);position:sticky;top:0;z-index:2}
nav a{display:inline-block;padding:10px 12px;color:var(--accent);text-decoration:none;font-size:14px}
nav a:hover{background:var(--bg)}
section{background:#fff;border:1px solid var(--line);border-radius:10px;margin:22px 0;padding:20px 24px}
h2{margin:0 0 6px;font-size:20px;color:var(--accent)}
h3{margin:20px 0 4px;font-size:16px}
p.lead{margin:0 0 14px;color:var(--muted);max-width:80ch}
figure{margin:0;overflow-x:auto}
figure img{display:block;max-width:100%;height:auto;margin:0 auto}
svg.tree{display:block;max-width:100%;height:auto;margin:0 auto}
figcaption{color:var(--muted);font-size:13px;margin-top:8px}
table{border-collapse:collapse;width:100%;font-variant-numeric:tabular-nums;font-size:14px}
th,td{padding:7px 10px;border-bottom:1px solid var(--line);text-align:right;white-space:nowrap}
th{background:var(--bg);color:var(--muted);font-weight:600;font-size:12.5px;text-transform:uppercase;letter-spacing:.03em}
td:first-child,th:first-child{text-align:left}
tbody tr:hover{background:#fafcfe}
.tablewrap{overflow-x:auto}
dl.meta{display:grid;grid-template-columns:max-content 1fr;gap:4px 18px;margin:0;font-size:14px}
dl.meta dt{color:var(--muted)}dl.meta dd{margin:0}
.good{color:var(--good);font-weight:600}.bad{color:var(--warn);font-weight:600}
.note{background:#fff8e6;border:1px solid #f0d9a0;border-radius:8px;padding:10px 14px;color:#6b4e00;font-size:14px}
footer{color:var(--muted);font-size:13px;padding:10px 0 40px}
code{font-family:ui-monospace,Menlo,Consolas,monospace;font-size:.92em;background:var(--bg);padding:1px 4px;border-radius:4px}
</style>
</head>
<body>
<header><div class="wrap">
<h1>Topology report{{with .In.Title}}: {{.}}{{end}}</h1>
<div class="sub">{{with .In.Date}}{{.}} · {{end}}{{.Size}} ranks{{with .World}} · {{.}}{{end}} · method {{.Method}}</div>
<div class="cards">
<div class="card"><span>Ranks</span><b>{{.Size}}</b></div>
<div class="card"><span>Levels found</span><b>{{len .In.Topology.Levels}}</b></div>
{{with .Coverage}}<div class="card"><span>Pairs measured</span><b>{{.}}</b></div>{{end}}
{{with .In.Topology.Measurements}}{{if gt .VirtualTimeS 0.0}}<div class="card"><span>Measurement time</span><b>{{sec .VirtualTimeS}}</b></div>{{end}}{{end}}
{{with .MeanNMI}}<div class="card"><span>Mean NMI vs truth</span><b>{{.}}</b></div>{{end}}
</div>
</div></header>
<nav><div class="wrap">
<a href="#summary">Summary</a><a href="#tree">Tree</a><a href="#levels">Levels</a>{{if .Heatmap}}<a href="#heatmap">Distance matrix</a>{{end}}{{if .Dendrogram}}<a href="#dendrogram">Dendrogram</a>{{end}}{{if .Swarm}}<a href="#swarm">Swarm</a>{{end}}<a href="#cost">Cost</a>{{if .Acc.Levels}}<a href="#accuracy">Accuracy</a>{{end}}{{if .Model}}<a href="#model">Model</a>{{end}}
</div></nav>
<main class="wrap">

<section id="summary">
<h2>Summary</h2>
<dl class="meta">
<dt>World</dt><dd>{{.Size}} ranks{{with .World}} · {{.}}{{end}}</dd>
<dt>Method</dt><dd>{{.Method}}</dd>
<dt>Levels</dt><dd>{{.LevelChain}}</dd>
{{with .Dist}}<dt>Distance</dt><dd>{{.Name}}{{if .Missing}} · {{.Missing}} pairs not measured{{if .Filled}}, {{.Filled}} filled from the tree's path latency{{end}}{{end}}</dd>{{end}}
{{with .In.TruthName}}<dt>Truth</dt><dd>platform {{.}}</dd>{{end}}
{{with .In.Date}}<dt>Date</dt><dd>{{.}}</dd>{{end}}
</dl>
{{range .Notes}}<p class="note">{{.}}</p>{{end}}
</section>

<section id="tree">
<h2>Topology tree</h2>
<p class="lead">{{if .TreeFromLevels}}The topology has no inferred switch tree, so this draws its levels: the whole world at the top, each level's groups below, ranks at the bottom.{{else}}Inferred switches (dark) and ranks (circles), rooted at the tree's centre. Edge labels give the one-way latency of the link{{if .TreeBW}} and its bandwidth where measured{{end}}; "each" labels one link from a switch to every child.{{end}}{{if .TreeBoxes}} The ranks under a switch are folded into a box ("sw3 · 64 ranks", then the ranks and the latency from the switch down to them; "↑" marks the box's own uplink, "sw" the switches folded in).{{end}} Hover a node for its ranks and hosts.</p>
<figure>{{.TreeSVG}}</figure>
</section>

<section id="levels">
<h2>Levels</h2>
<p class="lead">One row per level found, finest first. "Within" is the median over measured pairs that share a group of the level; "between" is the median over pairs in different groups of the level that still share a group one level up (the next step of the hierarchy). A real level shows a clear jump between the two.</p>
<div class="tablewrap"><table>
<thead><tr><th>Level</th><th>Groups</th><th>Size min / median / max</th>{{if .HaveRTT}}<th>RTT within</th><th>RTT between</th><th>Between / within</th>{{end}}{{if .HaveBW}}<th>Bandwidth within</th><th>Bandwidth between</th>{{end}}</tr></thead>
<tbody>
{{range .Levels}}<tr><td>{{.Name}}</td><td>{{.Groups}}</td><td>{{num .SizeMin}} / {{num .SizeMedian}} / {{num .SizeMax}}</td>{{if $.HaveRTT}}<td>{{sec .RTTWithin}}</td><td>{{sec .RTTBetween}}</td><td>{{ratio .RTTBetween .RTTWithin}}</td>{{end}}{{if $.HaveBW}}<td>{{bw .BWWithin}}</td><td>{{bw .BWBetween}}</td>{{end}}</tr>
{{end}}</tbody></table></div>
</section>

{{if .Heatmap}}<section id="heatmap">
<h2>Distance matrix</h2>
<p class="lead">The {{.Dist.Name}} of every pair, ranks reordered so that each group of each level is contiguous; white lines mark group boundaries (thicker for coarser levels). Dark is near, bright is far{{if .HeatLog}}; the colour scale is logarithmic because the values span {{.HeatRange}}{{else}} ({{.HeatRange}}){{end}}.{{if .HeatGaps}} Grey cells were not measured.{{end}}</p>
<figure><img src="{{.Heatmap}}" alt="distance matrix heat map" width="930"><figcaption>Also saved as heatmap.png and heatmap.svg.</figcaption></figure>
</section>{{end}}

{{if .Dendrogram}}<section id="dendrogram">
<h2>Dendrogram</h2>
<p class="lead">Agglomerative clustering ({{.Linkage}} linkage) of the distance matrix: each ∩ joins two clusters at the height of their distance. Dashed lines are the cuts that define the levels, placed in the gaps between bands of merge heights.</p>
<figure><img src="{{.Dendrogram}}" alt="dendrogram" width="1140"><figcaption>{{if .Cuts}}Cuts: {{range $i, $c := .Cuts}}{{if $i}} · {{end}}{{$c.Label}}{{end}}.{{else}}No height gap was found: the ranks form one flat level.{{end}} Also saved as dendrogram.png and dendrogram.svg.</figcaption></figure>
</section>{{end}}

{{with .Swarm}}<section id="swarm">
<h2>Swarm tomography</h2>
<p class="lead">{{.Iterations}} swarm broadcasts (seed 000 Ch. 4){{if .Stable}}, stopped when successive iterations found the same hierarchy{{end}}. The weighted graph clustered is each pair's {{if eq .Weight "rate"}}achieved rate (fragments per second of waiting, averaged over the iterations that connected the pair){{else}}fragment count w_n(e) (Eq. 4.2){{end}}, ranks in hierarchy order; bright is a fast pair, grey a pair that never exchanged a fragment.</p>
{{if .Graph}}<figure><img src="{{.Graph}}" alt="swarm weighted graph" width="930"><figcaption>Also saved as swarm-graph.png and swarm-graph.svg.</figcaption></figure>{{end}}
{{if .NMI}}<figure><img src="{{.NMI}}" alt="NMI over iterations" width="840"><figcaption>NMI between the hierarchies of successive iterations (1: the same). Also saved as swarm-nmi.png and swarm-nmi.svg.</figcaption></figure>{{end}}
{{if .Tree}}<h3>Bandwidth tree</h3>
<p class="lead">Maximum spanning tree over the groups of level {{.TreeLevel}}, weights averaged per connection (seed 000 Sect. 5.12, Eq. 5.4): a heavier edge is a faster path.</p>
<div class="tablewrap"><table><thead><tr><th>Group</th><th>Group</th><th>Weight ({{.TreeUnit}})</th></tr></thead>
<tbody>{{range .Tree}}<tr><td>{{.A}}</td><td>{{.B}}</td><td>{{.Weight}}</td></tr>
{{end}}</tbody></table></div>{{end}}
</section>{{end}}

<section id="cost">
<h2>Measurement cost</h2>
<p class="lead">How many of the {{.Size}} ranks' pairs each campaign measured, and how long it took (virtual seconds in the simulator, clock time on real hosts).</p>
{{if .Cost}}<div class="tablewrap"><table>
<thead><tr><th>Campaign</th><th>Pairs measured</th><th>Pairs planned</th><th>Of all pairs</th><th>Campaign time</th><th>Wall time</th><th>Complete</th></tr></thead>
<tbody>{{range .Cost}}<tr><td>{{.What}}</td><td>{{.Measured}}</td><td>{{.Total}}</td><td>{{.Percent}}</td><td>{{.Clock}}</td><td>{{.Wall}}</td><td>{{.Complete}}</td></tr>
{{end}}</tbody></table></div>{{else}}<p class="note">Neither the topology nor a dataset records the measurement cost.</p>{{end}}
</section>

{{if or .Acc.Levels .Acc.Links .Acc.Latency .Acc.TruthLatency}}<section id="accuracy">
<h2>Accuracy</h2>
{{if .Acc.Levels}}<p class="lead">Each true level of {{with .In.TruthName}}platform {{.}}{{else}}the truth{{end}} against the found level that matches it best (highest NMI). NMI and ARI are 1 for identical partitions; accuracy is the share of ranks put in the right group (seed 003, Eq. 3.7-3.9).</p>
<div class="tablewrap"><table>
<thead><tr><th>True level</th><th>Groups</th><th>Best found level</th><th>Groups</th><th>NMI</th><th>ARI</th><th>Accuracy</th></tr></thead>
<tbody>{{range .Acc.Levels}}<tr><td>{{.Truth}}</td><td>{{.TruthGroups}}</td><td>{{.Found}}</td><td>{{.FoundGroups}}</td><td class="{{if ge .NMI 0.999}}good{{else if lt .NMI 0.8}}bad{{end}}">{{f3 .NMI}}</td><td>{{f3 .ARI}}</td><td>{{pct .Accuracy}}</td></tr>
{{end}}</tbody></table></div>{{end}}
{{with .Acc.Links}}<h3>Shared-link queries</h3>
<p class="lead">{{.Queries}} random questions "do flows A→B and C→D share a link?" over {{$.Acc.LinkEndpoints}} hosts, answered by the tree and by the platform's routes (seed 002, Sect. 5).</p>
<div class="tablewrap"><table><thead><tr><th>Queries</th><th>True pos.</th><th>False pos.</th><th>False neg.</th><th>True neg.</th><th>FP rate</th><th>FN rate</th><th>Error rate</th></tr></thead>
<tbody><tr><td>{{.Queries}}</td><td>{{.TruePositive}}</td><td>{{.FalsePositive}}</td><td>{{.FalseNegative}}</td><td>{{.TrueNegative}}</td><td>{{pct .FalsePositiveRate}}</td><td>{{pct .FalseNegativeRate}}</td><td>{{pct .ErrorRate}}</td></tr></tbody></table></div>{{end}}
{{with .Acc.Latency}}<h3>Latency: tree vs measurement</h3>
<p class="lead">Tree path latency divided by measured one-way latency (RTT/2) for {{if $.Acc.LatencySampled}}an evenly spaced sample of {{.Pairs}} of the {{$.Acc.LatencySampled}} measured pairs{{else}}each of the {{.Pairs}} measured pairs{{end}}; a faithful tree puts the ratios near 1.</p>
<div class="tablewrap"><table><thead><tr><th>Pairs</th><th>Within 5 %</th><th>Within 10 %</th><th>Min</th><th>Median</th><th>Mean</th><th>Max</th></tr></thead>
<tbody><tr><td>{{.Pairs}}</td><td>{{pct .Within5}}</td><td>{{pct .Within10}}</td><td>{{f3 .Min}}</td><td>{{f3 .Median}}</td><td>{{f3 .Mean}}</td><td>{{f3 .Max}}</td></tr></tbody></table></div>{{end}}
{{with .Acc.TruthLatency}}<h3>Latency: tree vs truth</h3>
<p class="lead">Tree path latency divided by the platform's one-way route latency for {{if $.Acc.TruthLatencySampled}}an evenly spaced sample of {{.Pairs}} of the {{$.Acc.TruthLatencySampled}} host pairs{{else}}every one of the {{.Pairs}} host pairs, measured or not{{end}} (as <code>netaware topo compare</code> counts them).</p>
<div class="tablewrap"><table><thead><tr><th>Pairs</th><th>Within 5 %</th><th>Within 10 %</th><th>Min</th><th>Median</th><th>Mean</th><th>Max</th></tr></thead>
<tbody><tr><td>{{.Pairs}}</td><td class="{{if ge .Within5 0.95}}good{{else if lt .Within5 0.8}}bad{{end}}">{{pct .Within5}}</td><td>{{pct .Within10}}</td><td>{{f3 .Min}}</td><td>{{f3 .Median}}</td><td>{{f3 .Mean}}</td><td>{{f3 .Max}}</td></tr></tbody></table></div>{{end}}
</section>{{end}}

{{if .Model}}<section id="model">
<h2>Performance model</h2>
<p class="lead">What model.json holds{{with .In.Model.Source}} (from {{.}}){{end}}: latency and bandwidth per entry, summarised over entries.</p>
<div class="tablewrap"><table><thead><tr><th>Part</th><th>Entries</th><th>Latency</th><th>Bandwidth</th></tr></thead>
<tbody>{{range .Model}}<tr><td>{{.Part}}</td><td>{{.Entries}}</td><td>{{.Latency}}</td><td>{{.Bandwidth}}</td></tr>
{{end}}</tbody></table></div>
</section>{{end}}

</main>
<footer><div class="wrap">Generated by netaware. The plots are also in this directory as tree.svg, heatmap.png/.svg and dendrogram.png/.svg; docs/report.md explains each section.</div></footer>
</body>
</html>
`
