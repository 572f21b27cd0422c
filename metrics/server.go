package metrics

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/kafkas3/kafkas3/health"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// RegisterProcess registers with reg the Go runtime's and the process's
// collectors (go_*, process_*: CPU, memory, process_open_fds) and
// kafkas3_dependency_up, which exports ready's state.
func RegisterProcess(reg prometheus.Registerer, ready *health.Readiness) error {
	return register(reg, collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}), &readinessCollector{ready: ready})
}

// readinessCollector exports each dependency's state at scrape time.
type readinessCollector struct{ ready *health.Readiness }

func (c *readinessCollector) desc() *prometheus.Desc {
	return prometheus.NewDesc("kafkas3_dependency_up", "1 when the dependency (broker, store, registry, progress) last worked, 0 when it is down or not yet connected; /readyz is ready when all are 1.", []string{"dependency"}, nil)
}

func (c *readinessCollector) Describe(ch chan<- *prometheus.Desc) { ch <- c.desc() }

func (c *readinessCollector) Collect(ch chan<- prometheus.Metric) {
	d := c.desc()
	for _, s := range c.ready.Snapshot() {
		v := 0.0
		if s.Up {
			v = 1
		}
		ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, v, string(s.Dep))
	}
}

// Server serves /metrics (reg, in Prometheus' text or OpenMetrics
// format), /healthz (200 while the process runs) and /readyz (ready's
// state, health.Readiness.ServeHTTP).
type Server struct {
	ln  net.Listener
	srv *http.Server
	log *slog.Logger
}

// Listen binds addr (host:port; port 0 picks one) at once, so that an
// address in use fails the command before it starts, and returns the
// server; Serve serves it.
func Listen(addr string, reg *prometheus.Registry, ready *health.Readiness, log *slog.Logger) (*Server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--metrics-addr %s: %w", addr, err)
	}
	mux := http.NewServeMux()
	mux.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, EnableOpenMetrics: true}))
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintln(w, "ok")
	})
	mux.Handle("/readyz", ready)
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, ErrorLog: slog.NewLogLogger(log.Handler(), slog.LevelWarn)}
	return &Server{ln: ln, srv: srv, log: log}, nil
}

// Addr is the address the server listens on.
func (s *Server) Addr() string { return s.ln.Addr().String() }

// Serve serves until Close; run it in its own goroutine.
func (s *Server) Serve() {
	if err := s.srv.Serve(s.ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
		s.log.Warn("metrics server stopped", "addr", s.Addr(), "err", err)
	}
}

// Close stops the server, letting running requests finish for up to a
// second.
func (s *Server) Close() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_ = s.srv.Shutdown(ctx)
}
