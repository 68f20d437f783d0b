// Package outbound does the work that leaves the process: the runs of
// index attempts by workers, which lease them from a Quarry server over
// the worker protocol and run their connectors (package
// outbound/connector) against the systems admins connect, through the
// egress guard.
package outbound
