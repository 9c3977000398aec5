package status

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"strings"
	"sync"
)

// WriteHTML writes the timeline as one self-contained HTML page: inline
// CSS and SVG, no script, nothing fetched. Each layer is one bar (an SVG
// group of class "bar" with data-layer namespace/name) made of its spans;
// the time lost to dependency polling is hatched, the critical path's
// layers are bold and joined by a line through their Ready moments.
func (tl *Timeline) WriteHTML(w io.Writer) error {
	const (
		labelW = 340
		plotW  = 900
		rowH   = 22
		top    = 40
	)
	total := tl.Total
	if total <= 0 {
		total = 1
	}
	x := func(sec float64) float64 { return labelW + sec/total*plotW }
	type rect struct {
		X, W  float64
		Class string
		Title string
	}
	type row struct {
		Key, Kind, Label string
		Y, TextY         float64
		Critical         bool
		Rects            []rect
		Lost             *rect
		ReadyX           float64
		HasReady         bool
	}
	var rows []row
	var path []string
	for i, l := range tl.Layers {
		y := float64(top + i*rowH)
		r := row{Key: l.Key(), Kind: l.Kind, Label: l.Kind + " " + l.Key(), Y: y + 3, TextY: y + 15, Critical: l.Critical}
		for _, s := range l.Spans {
			r.Rects = append(r.Rects, rect{X: x(s.Start), W: math.Max(1, x(s.End)-x(s.Start)), Class: string(s.Phase),
				Title: fmt.Sprintf("%s %s %.1fs–%.1fs (%.1fs)", l.Key(), s.Phase, s.Start, s.End, s.End-s.Start)})
		}
		if l.Lost != nil {
			r.Lost = &rect{X: x(l.Lost.Start), W: math.Max(1, x(l.Lost.End)-x(l.Lost.Start)), Class: "lost",
				Title: fmt.Sprintf("%s lost to dependency polling: %.1fs (every dependency Ready at %.1fs)", l.Key(), l.Lost.End-l.Lost.Start, l.Lost.Start)}
		}
		if l.Ready >= 0 {
			r.ReadyX, r.HasReady = x(l.Ready), true
		}
		if l.Critical && l.Ready >= 0 {
			path = append(path, fmt.Sprintf("%.1f,%.1f", r.ReadyX, y+11))
		}
		rows = append(rows, r)
	}
	step := tickStep(total)
	type tick struct {
		X     float64
		Label string
	}
	var ticks []tick
	for s := 0.0; s <= total+1e-9; s += step {
		ticks = append(ticks, tick{X: x(s), Label: fmt.Sprintf("%gs", s)})
	}
	height := top + len(rows)*rowH + 30
	return pageTemplate().Execute(w, map[string]any{
		"TL": tl, "Rows": rows, "Ticks": ticks, "Width": labelW + plotW + 20, "Height": height,
		"PlotTop": top - 6, "PlotBottom": height - 24, "Path": strings.Join(path, " "),
		"Total": fmt.Sprintf("%.1f", tl.Total), "LostOnPath": fmt.Sprintf("%.1f", tl.LostOnPath), "LostAll": fmt.Sprintf("%.1f", tl.LostAll),
		"Critical": strings.Join(tl.CriticalPath, " → "), "Start": tl.Start.UTC().Format("2006-01-02 15:04:05 MST"),
	})
}

// tickStep is a round step giving at most about 12 ticks.
func tickStep(total float64) float64 {
	for _, s := range []float64{0.5, 1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 1800, 3600} {
		if total/s <= 12 {
			return s
		}
	}
	return 7200
}

// pageTemplate is parsed on first use, not at init.
var pageTemplate = sync.OnceValue(func() *template.Template {
	return template.Must(template.New("timeline").Parse(`<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
<title>Flux bootstrap timeline</title>
<style>
body { font: 14px system-ui, sans-serif; margin: 16px; color: #222; background: #fff; }
h1 { font-size: 18px; margin: 0 0 6px; }
p.summary { margin: 2px 0; }
svg text { font: 12px ui-monospace, monospace; fill: #222; }
svg text.critical { font-weight: bold; }
rect.waiting { fill: #d0d4da; }
rect.applying { fill: #4a90d9; }
rect.health-checking { fill: #f0a030; }
rect.failed { fill: #d9434a; }
rect.suspended { fill: #9b6fc4; }
rect.lost { fill: url(#hatch); stroke: #c0392b; stroke-width: 1; }
line.tick { stroke: #eee; }
text.tick { fill: #777; }
polyline.critical { fill: none; stroke: #111; stroke-width: 1.5; stroke-dasharray: 4 3; }
circle.ready { fill: #2e9e4f; }
.legend span { display: inline-block; margin-right: 14px; }
.legend i { display: inline-block; width: 12px; height: 12px; margin-right: 4px; vertical-align: -1px; }
</style>
</head>
<body>
<h1>Flux bootstrap timeline</h1>
<p class="summary">Started {{.Start}}; {{if .TL.Complete}}every layer Ready after <b>{{.Total}}s</b>{{else}}not every layer Ready after {{.Total}}s{{end}}.</p>
<p class="summary">Critical path: {{.Critical}}; lost to dependency polling on it: <b>{{.LostOnPath}}s</b> ({{.LostAll}}s over all layers) — what a wake-up on each dependency's Ready event saves.</p>
<p class="legend"><span><i style="background:#d0d4da"></i>waiting</span><span><i style="background:#4a90d9"></i>applying</span><span><i style="background:#f0a030"></i>health-checking</span><span><i style="background:#d9434a"></i>failed</span><span><i style="background:#9b6fc4"></i>suspended</span><span><i style="border:1px solid #c0392b"></i>lost to dependency polling</span><span><i style="background:#2e9e4f;border-radius:6px"></i>Ready</span></p>
<svg xmlns="http://www.w3.org/2000/svg" width="{{.Width}}" height="{{.Height}}" viewBox="0 0 {{.Width}} {{.Height}}">
<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="6" height="6" fill="#f6d5d2"/><line x1="0" y1="0" x2="0" y2="6" stroke="#c0392b" stroke-width="2"/></pattern></defs>
{{range .Ticks}}<line class="tick" x1="{{.X}}" y1="{{$.PlotTop}}" x2="{{.X}}" y2="{{$.PlotBottom}}"/><text class="tick" x="{{.X}}" y="{{$.PlotTop}}" text-anchor="middle" dy="-4">{{.Label}}</text>
{{end}}{{range .Rows}}<g class="bar" data-layer="{{.Key}}" data-kind="{{.Kind}}"><text x="4" y="{{.TextY}}"{{if .Critical}} class="critical"{{end}}>{{.Label}}</text>{{$y := .Y}}{{range .Rects}}<rect class="{{.Class}}" x="{{printf "%.1f" .X}}" y="{{$y}}" width="{{printf "%.1f" .W}}" height="16"><title>{{.Title}}</title></rect>{{end}}{{with .Lost}}<rect class="lost" x="{{printf "%.1f" .X}}" y="{{$y}}" width="{{printf "%.1f" .W}}" height="16"><title>{{.Title}}</title></rect>{{end}}{{if .HasReady}}<circle class="ready" cx="{{printf "%.1f" .ReadyX}}" cy="{{$y}}" r="4" transform="translate(0 8)"/>{{end}}</g>
{{end}}{{if .Path}}<polyline class="critical" points="{{.Path}}"/>{{end}}
</svg>
</body>
</html>
`))
})
