package status

import (
	"fmt"
	"io"
	"strings"
	"text/tabwriter"
	"time"
)

// WriteText writes the snapshot for a person: one line per layer along
// the graph (state, what it waits on, the revision applied against the
// one its source serves, since when, the message), then the blocking
// layers with the rule that explains each failure and its fix.
func (s *Snapshot) WriteText(w io.Writer) error {
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "LAYER\tSTATE\tREVISION\tSINCE\tMESSAGE")
	for _, l := range s.Layers {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\n", l.Ref, describeState(l), revisionText(l), since(s.At, l.Since), oneLine(l.Message, 100))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	c := s.Counts()
	fmt.Fprintf(w, "\n%d layers: %d Ready, %d Reconciling, %d WaitingOn, %d Failed, %d SourceNotReady, %d Suspended\n",
		len(s.Layers), c[StateReady], c[StateReconciling], c[StateWaitingOn], c[StateFailed], c[StateSourceNotReady], c[StateSuspended])
	blocking := s.Blocking()
	if len(blocking) == 0 {
		if s.Done("") {
			fmt.Fprintln(w, "Every layer is Ready with the revision its source serves.")
		}
		return nil
	}
	fmt.Fprintln(w, "\nBlocking:")
	for _, b := range blocking {
		line := fmt.Sprintf("  %s %s", b.Ref, describeState(b.Layer))
		if b.Missing {
			line = fmt.Sprintf("  %s does not exist", b.Ref)
		}
		if len(b.Holds) > 0 {
			line += fmt.Sprintf(", holding %d layer(s): %s", len(b.Holds), strings.Join(b.Holds, ", "))
		}
		fmt.Fprintln(w, line)
		if b.Message != "" && !b.Missing {
			fmt.Fprintf(w, "    message: %s\n", oneLine(b.Message, 0))
		}
		if x := b.Explanation; x != nil {
			fmt.Fprintf(w, "    rule: %s\n", x.Rule)
			if x.Edge != "" {
				fmt.Fprintf(w, "    missing edge: %s\n", x.Edge)
			}
			if x.Fix != "" {
				fmt.Fprintf(w, "    fix: %s\n", x.Fix)
			}
			if x.Finding != "" {
				fmt.Fprintf(w, "    lint: %s\n", x.Finding)
			}
		}
	}
	return nil
}

// WriteChanges writes one line per object the snapshot's event changed:
// time, object, state, message.
func (s *Snapshot) WriteChanges(w io.Writer) error {
	for _, ref := range s.Changed {
		l := s.Layer(ref)
		if l == nil {
			for i := range s.Sources {
				if s.Sources[i].Ref == ref {
					l = &s.Sources[i]
				}
			}
		}
		if l == nil {
			if _, err := fmt.Fprintf(w, "%s %s deleted\n", s.At.UTC().Format(time.TimeOnly), ref); err != nil {
				return err
			}
			continue
		}
		line := fmt.Sprintf("%s %s %s", s.At.UTC().Format(time.TimeOnly), ref, describeState(*l))
		if l.Message != "" && l.State != StateReady {
			line += ": " + oneLine(l.Message, 160)
		}
		if l.Explanation != nil && l.Explanation.Rule != "" {
			line += " [" + l.Explanation.Rule + "]"
		}
		if _, err := fmt.Fprintln(w, line); err != nil {
			return err
		}
	}
	return nil
}

func describeState(l Layer) string {
	switch {
	case l.State == StateWaitingOn:
		return "WaitingOn(" + strings.Join(l.WaitingOn, ",") + ")"
	case l.State == StateReconciling && l.Step != "":
		return "Reconciling(" + l.Step + ")"
	case l.State == StateFailed && l.Terminal:
		return "Failed(terminal)"
	}
	return string(l.State)
}

// revisionText is the applied revision, and the source's when it differs.
func revisionText(l Layer) string {
	applied := shortRevision(l.Applied)
	if applied == "" {
		applied = "-"
	}
	if l.SourceRevision != "" && l.SourceRevision != l.Applied {
		return applied + " (source " + shortRevision(l.SourceRevision) + ")"
	}
	return applied
}

// shortRevision cuts a digest to 12 hex characters.
func shortRevision(r string) string {
	if i := strings.Index(r, "sha256:"); i >= 0 && len(r) > i+7+12 {
		return r[:i+7+12]
	}
	if i := strings.Index(r, "sha1:"); i >= 0 && len(r) > i+5+12 {
		return r[:i+5+12]
	}
	return r
}

func since(now, t time.Time) string {
	if t.IsZero() {
		return "-"
	}
	d := now.Sub(t)
	if d < 0 {
		d = 0
	}
	return d.Round(time.Second).String()
}

func oneLine(s string, max int) string {
	s = strings.Join(strings.Fields(s), " ")
	if max > 0 && len(s) > max {
		return s[:max-1] + "…"
	}
	return s
}
