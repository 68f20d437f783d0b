package chat

import (
	"github.com/quarryhq/quarry"
)

// The context window, and what goes in it. The rule (see
// docs/decisions.md, "The context window"): a request holds at most
// (1 - SafetyMargin) of the model's window (MaxInputTokens of its
// provider's configuration, FallbackContextWindow when it says none),
// counted with quarry.EstimateTokens and messageOverhead a message. The
// instructions, the tools offered, the question and everything this
// answer's calls gave always go in; a request where they alone do not fit
// fails. Of the earlier messages, the newest go in while they fit, and the
// first that does not, and all before it, are left out (Onyx's rule in
// construct_message_history). A call's result may take at most half of
// the room left after the parts that always go in (resultShare), so that
// the model keeps room to answer and to call again: a search gives fewer
// documents, and another tool's answer is cut.

// FallbackContextWindow is the window of a model whose configuration says
// none (Onyx's GEN_AI_MODEL_FALLBACK_MAX_TOKENS).
const FallbackContextWindow = 32000

// SafetyMargin is the share of the window left free, for the estimate's
// errors (Onyx's GEN_AI_INPUT_TOKEN_SAFETY_MARGIN).
const SafetyMargin = 0.05

// messageOverhead is what a message costs besides its text: its role and
// framing, three or four tokens in OpenAI's count.
const messageOverhead = 4

// resultShare is the share of the room left that a call's result may take.
const resultShare = 2

// MessageTokens returns the estimated cost of m in a request.
func MessageTokens(m quarry.ModelMessage) int {
	n := messageOverhead + quarry.EstimateTokens(m.Content)
	for _, c := range m.ToolCalls {
		n += messageOverhead + quarry.EstimateTokens(c.Name) + quarry.EstimateTokens(c.Arguments)
	}
	return n
}

// ToolTokens returns the estimated cost of offering tools.
func ToolTokens(tools []quarry.ModelTool) int {
	n := 0
	for _, t := range tools {
		n += messageOverhead + quarry.EstimateTokens(t.Name) + quarry.EstimateTokens(t.Description) + quarry.EstimateTokens(string(t.Parameters))
	}
	return n
}

// window is the budget of a request, in estimated tokens.
type window struct{ limit int }

func newWindow(maxInput int) window {
	if maxInput <= 0 {
		maxInput = FallbackContextWindow
	}
	return window{int(float64(maxInput) * (1 - SafetyMargin))}
}

// fixed returns the cost of what always goes in.
func fixed(system quarry.ModelMessage, current []quarry.ModelMessage, tools []quarry.ModelTool) int {
	n := MessageTokens(system) + ToolTokens(tools)
	for _, m := range current {
		n += MessageTokens(m)
	}
	return n
}

// errTooLong answers a request whose fixed parts take more than the window.
func (w window) errTooLong(n int) error {
	return quarry.Errorf(quarry.EINVALID, "The question, the instructions and the tools take about %d tokens, more than the %d the model's context window holds", n, w.limit)
}

// fit returns the messages of a request: system, the newest of history
// that fit, and current; or an error when system, current and tools alone
// do not fit.
func (w window) fit(system quarry.ModelMessage, history, current []quarry.ModelMessage, tools []quarry.ModelTool) ([]quarry.ModelMessage, error) {
	n := fixed(system, current, tools)
	if n > w.limit {
		return nil, w.errTooLong(n)
	}
	room := w.limit - n
	from := len(history)
	for from > 0 {
		c := MessageTokens(history[from-1])
		if c > room {
			break
		}
		room -= c
		from--
	}
	out := make([]quarry.ModelMessage, 0, 1+len(history)-from+len(current))
	out = append(out, system)
	out = append(out, history[from:]...)
	return append(out, current...), nil
}

// room returns how many tokens a call's result may take.
func (w window) room(system quarry.ModelMessage, current []quarry.ModelMessage, tools []quarry.ModelTool) int {
	left := w.limit - fixed(system, current, tools)
	if left < 0 {
		return 0
	}
	return left / resultShare
}

// CheckFits reports whether t's question can be asked at all: the
// instructions, the tools and the question (with its context) fit the
// model's context window (400 otherwise), so that a question that cannot
// be answered is refused before its answer begins.
func CheckFits(t *Turn) error {
	r := &run{t: t, start: t.Now}
	w := newWindow(t.MaxInputTokens)
	system := quarry.ModelMessage{Role: quarry.ModelSystem, Content: r.systemPrompt()}
	if n := fixed(system, questionMessages(t), r.definitions()); n > w.limit {
		return w.errTooLong(n)
	}
	return nil
}
