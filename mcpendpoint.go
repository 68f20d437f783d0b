package quarry

// Quarry's own MCP endpoint (/mcp): the names it gives the tools it
// offers, and who may use them.

// MCPNameLimit is the longest tool name the MCP specification allows.
const MCPNameLimit = 128

// MCPToolName returns the name Quarry's MCP endpoint gives an operation
// of a tool, or a tool of an MCP server: "<prefix>__<name>", where prefix
// is the custom tool's name (or the MCP server's) and name the method
// (or the server's tool name), every character outside [A-Za-z0-9_-]
// turned into "_" (the characters every MCP client accepts), the prefix
// cut so that the whole is at most MCPNameLimit characters.
func MCPToolName(prefix, name string) string {
	p, n := sanitizeMCPName(prefix), sanitizeMCPName(name)
	if len(n) > MCPNameLimit-3 {
		n = n[:MCPNameLimit-3]
	}
	if len(p)+2+len(n) > MCPNameLimit {
		p = p[:MCPNameLimit-2-len(n)]
	}
	return p + "__" + n
}

// sanitizeMCPName replaces each character of s outside [A-Za-z0-9_-]
// with "_", and gives "_" for "".
func sanitizeMCPName(s string) string {
	b := make([]byte, 0, len(s))
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z', 'A' <= r && r <= 'Z', '0' <= r && r <= '9', r == '_', r == '-':
			b = append(b, byte(r))
		default:
			b = append(b, '_')
		}
	}
	if len(b) == 0 {
		return "_"
	}
	return string(b)
}

// CanUseToolsOverMCP reports whether c may use tools through Quarry's
// MCP endpoint: those who may run tools (holders of basic: every role but
// limited).
func (c *Caller) CanUseToolsOverMCP() bool { return c.Has(PermBasic) }

// ConnectorStatusURI is the resource of Quarry's MCP endpoint that holds
// the connector status listing the caller sees.
const ConnectorStatusURI = "quarry://connector-status"
