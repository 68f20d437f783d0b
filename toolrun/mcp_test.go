package toolrun

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/quarryhq/quarry"
)

// TestMCPFailureMasksBeforeTheClip: an MCP server's words are clipped
// for messages only after its secrets are masked, so that a clip never
// keeps a prefix of a secret (issue 31), whatever padding comes before
// it: a JSON-RPC error (clipped at 300 bytes) and a protocol failure
// (at 200).
func TestMCPFailureMasksBeforeTheClip(t *testing.T) {
	r := NewRunner(Policy{})
	const secret = "mcp-secret-token-0123456789"
	secrets := (&MCPTarget{Bearer: secret}).secrets()
	for pad := 150; pad <= 310; pad++ {
		for _, err := range []error{
			&jsonrpc.Error{Code: 7, Message: strings.Repeat("a", pad) + secret + "~~~~~~~~"},
			errors.New("unexpected answer: " + strings.Repeat("b", pad) + secret + "~~~~~~~~"),
		} {
			f := r.mcpFailure(context.Background(), context.Background(), "mcp.example.com", &mcpTransport{}, secrets, err)
			msg := f.Error()
			var qe *quarry.Error
			if errors.As(f, &qe) {
				msg = qe.Message
			}
			msg = strings.TrimSuffix(msg, "…")
			msg = strings.TrimSuffix(msg, " (JSON-RPC error 7)")
			msg = strings.TrimSuffix(msg, "…")
			for k := 1; k <= len(secret); k++ {
				if strings.HasSuffix(msg, secret[:k]) || strings.Contains(msg, secret) {
					t.Fatalf("pad %d: %q keeps %q of the secret", pad, msg, secret[:k])
				}
			}
		}
	}
}
