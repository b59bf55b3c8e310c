package loadtest

import (
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/nodezero/nodezero/sim/simagent"
)

// Report is what `nodezero loadtest` prints. Times of the run are from
// starting the agents.
type Report struct {
	Mode    string `json:"mode"` // real or sim
	Hosts   int    `json:"hosts"`
	Cadence string `json:"cadence"` // long-poll or upstream (no ?wait=, next_instruction_seconds)
	Wait    string `json:"wait"`
	Idle    string `json:"idle"`
	Ramp    string `json:"ramp"` // sim: the agents' starts spread over this long
	Bin     string `json:"bin"`
	// The simulated install's settings, when the runs installed.
	DiskMiB          int         `json:"disk_mib,omitempty"`
	Write            string      `json:"write,omitempty"`
	Reboot           string      `json:"reboot,omitempty"`
	InstallPoll      string      `json:"install_poll,omitempty"`
	StartupSamplesMs []float64   `json:"startup_samples_ms"` // process start → first /health answer
	StartupMedianMs  float64     `json:"startup_median_ms"`
	Runs             []RunReport `json:"runs"`
	Median           RunReport   `json:"median"` // of every figure over the runs; no request table
}

// RunReport is one run's figures.
type RunReport struct {
	StartupMs float64 `json:"startup_ms"`
	// AllKnownS is when the last host became known, by the service's
	// status_updated_at; DetectedS when the poller saw it.
	AllKnownS     float64 `json:"all_known_s"`
	DetectedS     float64 `json:"all_known_detected_s"`
	ClusterReadyS float64 `json:"cluster_ready_s"`
	RampCPUS      float64 `json:"ramp_cpu_s"`        // service CPU, agents started → cluster ready
	RampCores     float64 `json:"ramp_cores"`        // the same over the ramp's duration
	RampRSSMiB    float64 `json:"ramp_peak_rss_mib"` // VmHWM when the cluster became ready
	IdleCPUPct    float64 `json:"idle_cpu_pct"`      // % of one core over the idle window
	IdleRSSMiB    float64 `json:"idle_rss_mib"`      // VmRSS at the end of the idle window
	// PeakRSSMiB is VmHWM at the end of the run: the idle window's
	// requests can push it past RampRSSMiB.
	PeakRSSMiB float64 `json:"peak_rss_mib"`
	SQLiteMiB  float64 `json:"sqlite_mib"` // nodezero.db + -wal at the end
	// IdleRequests counts the agents' requests in the idle window.
	IdleRequests int `json:"idle_requests,omitempty"`
	// LoadgenCPUS is the load generator's CPU over the run: this process
	// (simulated agents, poller) and the real agents' processes.
	LoadgenCPUS float64 `json:"loadgen_cpu_s"`
	// OtherCores is the CPU that processes other than the service and
	// the load generator took over the run, in cores: a busy machine
	// skews every figure.
	OtherCores float64 `json:"other_cores"`
	// CPUS is the service's CPU over the whole run, agents started to the
	// end (the install's end with --install).
	CPUS    float64        `json:"cpu_s"`
	Install *InstallReport `json:"install,omitempty"`
	// Errors counts the requests of every kind that failed: an answer
	// other than 2xx, or none. None is expected.
	Errors   int             `json:"errors"`
	Requests []RequestReport `json:"requests,omitempty"`
}

// busyMachine is the CPU, in cores, other processes may take before a
// report warns that its figures are skewed.
const busyMachine = 0.1

// RequestReport is the latency of one request kind.
type RequestReport struct {
	Kind       string `json:"kind"`
	Count      int    `json:"count"`
	Errors     int    `json:"errors"`
	FirstError string `json:"first_error,omitempty"`
	// ErrorTexts are the errors by text, most frequent first.
	ErrorTexts []ErrorText `json:"error_texts,omitempty"`
	P50Ms      float64     `json:"p50_ms"`
	P99Ms      float64     `json:"p99_ms"`
	MaxMs      float64     `json:"max_ms"`
	// FirstS and LastS are when the first and the last successful request
	// ended, in seconds from the run's start.
	FirstS float64 `json:"first_s"`
	LastS  float64 `json:"last_s"`
}

// ErrorText is how often one error happened.
type ErrorText struct {
	Text  string `json:"text"`
	Count int    `json:"count"`
}

// summarise fills the medians.
func (r *Report) summarise() {
	r.StartupMedianMs = median(r.StartupSamplesMs)
	col := func(f func(RunReport) float64) float64 {
		xs := make([]float64, len(r.Runs))
		for i, run := range r.Runs {
			xs[i] = f(run)
		}
		return median(xs)
	}
	r.Median = RunReport{
		StartupMs:     col(func(x RunReport) float64 { return x.StartupMs }),
		AllKnownS:     col(func(x RunReport) float64 { return x.AllKnownS }),
		DetectedS:     col(func(x RunReport) float64 { return x.DetectedS }),
		ClusterReadyS: col(func(x RunReport) float64 { return x.ClusterReadyS }),
		RampCPUS:      col(func(x RunReport) float64 { return x.RampCPUS }),
		RampCores:     col(func(x RunReport) float64 { return x.RampCores }),
		RampRSSMiB:    col(func(x RunReport) float64 { return x.RampRSSMiB }),
		IdleCPUPct:    col(func(x RunReport) float64 { return x.IdleCPUPct }),
		IdleRSSMiB:    col(func(x RunReport) float64 { return x.IdleRSSMiB }),
		PeakRSSMiB:    col(func(x RunReport) float64 { return x.PeakRSSMiB }),
		SQLiteMiB:     col(func(x RunReport) float64 { return x.SQLiteMiB }),
		IdleRequests:  int(col(func(x RunReport) float64 { return float64(x.IdleRequests) })),
		LoadgenCPUS:   col(func(x RunReport) float64 { return x.LoadgenCPUS }),
		OtherCores:    col(func(x RunReport) float64 { return x.OtherCores }),
		CPUS:          col(func(x RunReport) float64 { return x.CPUS }),
		Errors:        int(col(func(x RunReport) float64 { return float64(x.Errors) })),
	}
	installs := 0
	for _, run := range r.Runs {
		if run.Install != nil {
			installs++
		}
	}
	if installs == len(r.Runs) && installs > 0 {
		icol := func(f func(InstallReport) float64) float64 {
			return col(func(x RunReport) float64 { return f(*x.Install) })
		}
		r.Median.Install = &InstallReport{
			RolesS:     icol(func(x InstallReport) float64 { return x.RolesS }),
			PreparedS:  icol(func(x InstallReport) float64 { return x.PreparedS }),
			InstalledS: icol(func(x InstallReport) float64 { return x.InstalledS }),
			CPUS:       icol(func(x InstallReport) float64 { return x.CPUS }),
			Cores:      icol(func(x InstallReport) float64 { return x.Cores }),
			SQLiteMiB:  icol(func(x InstallReport) float64 { return x.SQLiteMiB }),
		}
	}
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteTable prints the figures, the install's, the request latencies of
// the last run and how they compare with the goals of issues #2 and #8.
func (r *Report) WriteTable(w io.Writer) error {
	kind := "simulated agents"
	if r.Mode == "real" {
		kind = "nodezero agent processes"
	}
	cadence := "long-poll ?wait=" + r.Wait
	if r.Cadence == Upstream {
		cadence = "upstream cadence (no ?wait=, next_instruction_seconds between requests)"
	}
	fmt.Fprintf(w, "nodezero loadtest: %d %s, started over %s, %s, idle %s, service %s\n", r.Hosts, kind, r.Ramp, cadence, r.Idle, r.Bin)
	fmt.Fprintf(w, "startup (process start → first /health answer): median %.1f ms of %d [%s]\n\n",
		r.StartupMedianMs, len(r.StartupSamplesMs), joinFloats(r.StartupSamplesMs, "%.1f"))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "run\tstartup\tall known\tready\tramp CPU\tcores\tpeak RSS\tidle CPU\tidle RSS\tSQLite\tidle reqs\tloadgen CPU\tothers\t")
	row := func(name string, x RunReport) {
		fmt.Fprintf(tw, "%s\t%.1f ms\t%.3f s\t%.3f s\t%.2f s\t%.2f\t%.1f MiB\t%.2f %%\t%.1f MiB\t%.2f MiB\t%d\t%.2f s\t%.2f\t\n",
			name, x.StartupMs, x.AllKnownS, x.ClusterReadyS, x.RampCPUS, x.RampCores, x.PeakRSSMiB,
			x.IdleCPUPct, x.IdleRSSMiB, x.SQLiteMiB, x.IdleRequests, x.LoadgenCPUS, x.OtherCores)
	}
	for i, run := range r.Runs {
		row(fmt.Sprint(i+1), run)
	}
	if len(r.Runs) > 1 {
		row("median", r.Median)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	if r.Median.OtherCores > busyMachine {
		fmt.Fprintf(w, "warning: other processes kept %.2f cores busy during the runs; the figures are skewed\n", r.Median.OtherCores)
	}
	if r.Median.Install != nil {
		fmt.Fprintf(w, "\ninstall (%d MiB per disk written over %s, reboot after %s, installer polls every %s; times from the install action)\n",
			r.DiskMiB, r.Write, r.Reboot, r.InstallPoll)
		tw = tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
		fmt.Fprintln(tw, "run\troles\tinstalling\tinstalled\tinstall CPU\tcores\tSQLite\trun CPU\tpeak RSS\terrors\t")
		irow := func(name string, x RunReport) {
			i := x.Install
			fmt.Fprintf(tw, "%s\t%.2f s\t%.2f s\t%.2f s\t%.2f s\t%.2f\t%.2f MiB\t%.2f s\t%.1f MiB\t%d\t\n",
				name, i.RolesS, i.PreparedS, i.InstalledS, i.CPUS, i.Cores, i.SQLiteMiB, x.CPUS, x.PeakRSSMiB, x.Errors)
		}
		for i, run := range r.Runs {
			irow(fmt.Sprint(i+1), run)
		}
		if len(r.Runs) > 1 {
			irow("median", r.Median)
		}
		if err := tw.Flush(); err != nil {
			return err
		}
	}
	last := r.Runs[len(r.Runs)-1]
	fmt.Fprintf(w, "\nrequests (run %d)\n", len(r.Runs))
	if err := writeRequests(w, last.Requests); err != nil {
		return err
	}
	_, err := fmt.Fprintf(w, "\ngoals (issues #2, #8): %s\n", strings.Join(r.goals(), "; "))
	return err
}

// writeRequests prints the latency table and every error by text.
func writeRequests(w io.Writer, reqs []RequestReport) error {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', tabwriter.AlignRight)
	fmt.Fprintln(tw, "kind\tcount\terrors\tp50\tp99\tmax\tfirst…last ended\t")
	for _, q := range reqs {
		fmt.Fprintf(tw, "%s\t%d\t%d\t%.2f ms\t%.2f ms\t%.2f ms\t%.2f…%.2f s\t\n", q.Kind, q.Count, q.Errors, q.P50Ms, q.P99Ms, q.MaxMs, q.FirstS, q.LastS)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	for _, q := range reqs {
		for _, e := range q.ErrorTexts {
			if _, err := fmt.Fprintf(w, "%s error ×%d: %s\n", q.Kind, e.Count, e.Text); err != nil {
				return err
			}
		}
	}
	return nil
}

// goals compares the medians with the goals.
func (r *Report) goals() []string {
	check := func(name string, got, limit float64, unit string) string {
		verdict := "met"
		if got >= limit {
			verdict = "MISSED"
		}
		return fmt.Sprintf("%s %.3g %s < %g: %s", name, got, unit, limit, verdict)
	}
	out := []string{check("startup", r.StartupMedianMs, 50, "ms")}
	m := r.Median
	if r.Mode == "real" {
		return append(out, check("cluster ready", m.ClusterReadyS, 1, "s"), check("idle RSS", m.IdleRSSMiB, 30, "MiB"))
	}
	out = append(out, check("all known", m.AllKnownS, 10, "s"), check("peak RSS", m.PeakRSSMiB, 100, "MiB"),
		check("idle CPU", m.IdleCPUPct, 5, "%"))
	worst, worstKind := 0.0, ""
	errs := 0
	for _, run := range r.Runs {
		errs += run.Errors
		for _, q := range run.Requests {
			// A GET for instructions is held until work comes or the wait
			// ends, so its time is mostly the hold, not the service's
			// speed: an empty answer lasts the wait by design, and one with
			// instructions may have been released from its hold by them
			// (every status change of the install wakes the held GETs).
			// A GET without ?wait= (next-steps (poll)) is never held and
			// counts. The poller is the load test's own.
			switch q.Kind {
			case simagent.KindNextStepsHeld, simagent.KindNextSteps, KindPoll:
				continue
			}
			if q.P99Ms > worst {
				worst, worstKind = q.P99Ms, q.Kind
			}
		}
	}
	out = append(out, check("worst p99 ("+worstKind+")", worst, 50, "ms"))
	verdict := "met"
	if errs > 0 {
		verdict = "MISSED"
	}
	return append(out, fmt.Sprintf("error responses %d = 0: %s", errs, verdict))
}

func joinFloats(xs []float64, format string) string {
	s := make([]string, len(xs))
	for i, x := range xs {
		s[i] = fmt.Sprintf(format, x)
	}
	return strings.Join(s, " ")
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

func mib(b int64) float64 { return float64(b) / (1 << 20) }

// median returns the median of xs (the mean of the middle two for an even
// count), 0 for none.
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}
