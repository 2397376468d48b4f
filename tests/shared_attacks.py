"""Hostile programs against the server's shared parts: the kept `dot`s, the layout caches and
the result cache (tests/test_shared_parts.py runs them through real sessions).

Each attack is a payload put where a program's text reaches the DOT the server writes
(a carrier): a module's name (`add_module`, `register_module`, `setattr`, `ModuleDict`,
`Sequential(OrderedDict)`, a module inside a module), a parameter's (`ParameterDict`,
`register_parameter`), a value a custom Function saves as `ctx._saved_*` (its node's label
and tooltip), a buffer's name (which reaches no DOT: the control), and, where only
identifiers may stand, a variable's, a Function class's and a module attribute's name.

Payloads hold the bytes and words DOT, SVG and the kept `dot`'s reader give a meaning to
(NUL, CR, LF, quotes, backslashes, braces, comments, HTML, entities, line separators, tabs,
keywords, `</svg>`, the JSON end the reader waits for...). The *armed* ones break out of a
DOT string as `dot` 2.43 reads it: a backslash, then NUL (`dot` drops the rest of that line,
its line end included), then LF and a quote: the quote's escape meets the backslash before
it, `\\\\"` ends the string and the rest is read as DOT: a second graph with a
`javascript:` link, a comment that swallows whatever the kept `dot` reads next, or a stray
brace that ends the `dot` after its extra drawing. What follows the break depends on where
the carrier's text stands (`context`): in a cluster's `subgraph "..." {` (module names), in
a node's label (parameters), or at the end of a label that is cut to 50 characters (saved
values)."""

from __future__ import annotations

import unicodedata
from dataclasses import dataclass, field

MARK = "Zq9mark"  # in every payload: the attacker's own picture shows it, as text
AT = "@M@"  # where a payload puts MARK
LINK = "javascript:alert(1)"
EVIL = "EVILPIC"  # the label of a node an armed payload smuggles in


@dataclass(frozen=True)
class Payload:
    """A name's text (`text`, or one per context: `armed`); AT stands for MARK."""

    name: str
    text: str = ""
    armed: dict[str, str] = field(default_factory=dict)
    core: bool = False  # tried through every carrier, not only through `add_module`

    def for_context(self, context: str) -> str:
        text = self.armed.get(context, self.armed.get("label", self.text))
        return text.replace(AT, MARK)


def _armed(name: str, cluster: str, label: str, saved: str) -> Payload:
    """A payload that ends its DOT string (backslash, NUL, LF, quote) and goes on as DOT, as
    `cluster`, `label` or `saved` says for where it stands."""
    breakout = 'a\\\x00\n"'
    return Payload(name, armed={"cluster": breakout + cluster, "label": breakout + label,
                                "saved": breakout + saved}, core=True)


# The second graph an armed payload draws: a node that links to a script.
_SMUGGLED = f"e [URL=<{LINK}> label=<{EVIL}>]"
PAYLOADS = [
    # Control characters, one by one: each must stay inside its string and its line.
    Payload("nul", f"a\x00 {AT} z", core=True),
    Payload("nul_at_end", f"{AT} \x00"),
    Payload("cr", f"a\r {AT} \rz", core=True),
    Payload("lf", f"a\n {AT} \nz", core=True),
    Payload("crlf", f"a\r\n {AT} \r\n"),
    Payload("tab", f"a\t {AT} \t\tb"),
    Payload("tab_statement", f"\n\tevil [label=x]\n\t{AT} -> evil"),
    Payload("c0_c1_controls", "".join(map(chr, range(1, 32))) + f" {AT} \x7f"
            + "".join(map(chr, range(0x80, 0xA0)))),
    Payload("line_separators", f"a\u2028 {AT} \u2029b\u0085c", core=True),
    Payload("bidi_and_zero_width", f"\u202e {AT} \u202d\u2066\u200b\ufeff\u200d"),
    Payload("lone_surrogates", f"\ud800 {AT} \udfff"),
    Payload("noncharacters", f"\uffff\ufffe {AT} \U0010ffff"),
    # Quotes and backslashes: an odd backslash escapes the closing quote.
    Payload("quote", f'a" {AT} "z', core=True),
    Payload("escaped_quote", f'a\\" {AT} \\\\"'),
    Payload("trailing_backslash", f"{AT} \\", core=True),
    Payload("three_trailing_backslashes", f"{AT} \\\\\\"),
    Payload("backslash_then_nul", f"{AT} \\\x00"),
    Payload("escstrings", f"{AT} \\N \\G \\E \\T \\H \\L \\l \\r \\n \\"),
    Payload("unarmed_breakout", f'a\\\x00\n" {AT} ', core=True),
    # DOT's own syntax, as text.
    Payload("braces", f"{AT} }} }} {{ {{"),
    Payload("block_comment_open", f"{AT} /* "),
    Payload("block_comment_close", f" */ {AT} "),
    Payload("line_comment", f"{AT} // x"),
    Payload("hash_line", f"\n# {AT}\n#"),
    Payload("digraph", f"{AT} }} digraph {{ evil }} "),
    Payload("subgraph", f"{AT} subgraph cluster_evil {{ evil }}"),
    Payload("strict_graph_keywords", f"strict graph node edge subgraph digraph {AT}"),
    Payload("node_ids", f"{AT} t1 n2 n3 result module1 group1 cluster_net"),
    Payload("graph_names", f"%3 {AT} explorer_0123456789abcdef0123456789abcdef %s"),
    # What the SVG and the kept `dot`'s reader read.
    Payload("html_label", f"<<table><tr><td href='{LINK}'>{AT}</td></tr></table>>", core=True),
    Payload("svg_link", f'<a xlink:href="{LINK}">{AT}</a>'),
    Payload("script", f"<script>alert(1)</script>{AT}"),
    Payload("entities", f"{AT} &amp; &lt;script&gt; &#60;a & &#0; &"),
    Payload("xml_comment_and_cdata", f"{AT} -- --> <!-- ]]> <![CDATA["),
    Payload("svg_end", f"{AT} </svg>\n<svg>"),
    Payload("json_end", f"{AT} \n}}\n"),
    Payload("svg_heading", f"{AT} <!-- Title: %3 Pages: 1 -->"),
    # Size.
    Payload("long", f"{AT} " + "w" * 20_000),
    Payload("many_lines", f"{AT}" + "\n-" * 400),
    # Armed: they end their string as `dot` reads it.
    _armed("armed_link_then_comment",
           cluster=f" {{ }} }} }} digraph {{ {_SMUGGLED} }} /* {AT}",
           label=f" ] }} digraph {{ {_SMUGGLED} }} /* {AT}",
           saved=f"]}}digraph{{e[URL=<{LINK}>]}}/*{AT}"),
    _armed("armed_comment", cluster=f" {{ }} }} }} digraph {{ /* {AT}",
           label=f" ] }} digraph {{ /* {AT}", saved=f"]}}digraph{{/*{AT}"),
    _armed("armed_extra_graph_then_stray_brace",
           cluster=f" {{ }} }} }} digraph {{ e [label=<{EVIL}>] }} }} {AT}",
           label=f" ] }} digraph {{ e [label=<{EVIL}>] }} }} {AT}",
           saved=f"]}}digraph{{e[label={EVIL}]}}}}{AT}"),
    _armed("armed_open_graph", cluster=f" {{ }} }} }} digraph {{ subgraph {{ {AT}",
           label=f" ] }} digraph {{ subgraph {{ {AT}", saved=f"]}}digraph{{subgraph{{{AT}"),
    # Ends the graph, then draws a second one slow enough (300 nodes) to come after the kept
    # `dot`'s reader took the first, and names its last node by an HTML-like id that takes in
    # the rest of the DOT up to its last `>` (a parameter's graph has four edges after its
    # label): the `dot` reads no more than it was given and stays one drawing behind, so each
    # later visitor is shown the graph of the visitor before. A parameter's label only.
    Payload("armed_shift", armed={"label": 'a\\\x00\n" ] } digraph { ' + AT + " "
                                  + "->".join(f"c{i}" for i in range(300)) + " <<<<"},
            core=True),
]


@dataclass(frozen=True)
class Carrier:
    """Where a program puts a name that reaches the DOT: `program(name)` is a program with a
    backward call whose graph holds `name` there; `context` is where the name stands in the
    DOT (cluster, label, saved, or none: it reaches no DOT)."""

    name: str
    context: str
    template: str

    def program(self, name: str) -> str:
        return self.template.replace("NAME", repr(name))


_CALLED = "x = torch.ones(2, requires_grad=True)\ny = net(x).sum()\ny.backward()\n"
_FUNCTION = ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
             "        ctx._saved_note = NAME\n        return x * 2\n    @staticmethod\n"
             "    def backward(ctx, g):\n        return g * 2\n\n"
             "x = torch.ones(2, requires_grad=True)\ny = F.apply(x).sum()\ny.backward()\n")
CARRIERS = {c.name: c for c in [
    Carrier("add_module", "cluster",
            "net = torch.nn.Sequential()\nnet.add_module(NAME, torch.nn.Tanh())\n" + _CALLED),
    Carrier("register_module", "cluster",
            "net = torch.nn.Sequential()\nnet.register_module(NAME, torch.nn.Tanh())\n"
            + _CALLED),
    Carrier("setattr_module", "cluster",
            "net = torch.nn.Sequential()\nsetattr(net, NAME, torch.nn.Tanh())\n" + _CALLED),
    Carrier("module_dict", "cluster",
            "net = torch.nn.ModuleDict({NAME: torch.nn.Tanh()})\n"
            "x = torch.ones(2, requires_grad=True)\ny = net[NAME](x).sum()\ny.backward()\n"),
    Carrier("module_dict_item", "cluster",
            "net = torch.nn.ModuleDict()\nnet[NAME] = torch.nn.Tanh()\n"
            "x = torch.ones(2, requires_grad=True)\ny = net[NAME](x).sum()\ny.backward()\n"),
    # collections is not importable; a state_dict is an OrderedDict.
    Carrier("sequential_ordered_dict", "cluster",
            "keys = torch.nn.Module().state_dict()\nkeys[NAME] = torch.nn.Tanh()\n"
            "net = torch.nn.Sequential(keys)\n" + _CALLED),
    Carrier("nested_modules", "cluster",
            "inner = torch.nn.Sequential()\ninner.add_module(NAME, torch.nn.Tanh())\n"
            "net = torch.nn.Sequential()\nnet.add_module(NAME, inner)\n" + _CALLED),
    Carrier("parameter_dict", "label",
            "net = torch.nn.ParameterDict({NAME: torch.nn.Parameter(torch.ones(2))})\n"
            "y = (net[NAME] * 2).sum()\ny.backward()\n"),
    Carrier("register_parameter", "label",
            "net = torch.nn.Module()\n"
            "net.register_parameter(NAME, torch.nn.Parameter(torch.ones(2)))\n"
            "y = (net.get_parameter(NAME) * 2).sum()\ny.backward()\n"),
    Carrier("saved_value", "saved", _FUNCTION),
    Carrier("register_buffer", "none",
            "net = torch.nn.Module()\n"
            "net.register_buffer(NAME, torch.ones(2, requires_grad=True))\n"
            "y = (net.get_buffer(NAME) * 2).sum()\ny.backward()\n"),
]}


def string_attacks() -> list[tuple[str, str]]:
    """(carrier, payload) pairs: every payload through `add_module`, the core ones (each
    control character that ends a line or a string, quotes, backslashes, HTML, and every
    armed one) through every carrier."""
    pairs = [("add_module", p.name) for p in PAYLOADS]
    pairs += [(c, p.name) for c in CARRIERS if c != "add_module" for p in PAYLOADS if p.core]
    return pairs


PAYLOAD = {p.name: p for p in PAYLOADS}

# Names only identifiers may carry (a variable, a class, an attribute): Python keeps them
# NFKC-normalised, so no control character, but letters from every script, marks, and words
# DOT gives a meaning to.
IDENTIFIERS = {
    "fraktur": "\u210c\U0001d522\U0001d529\U0001d529\U0001d52c",  # NFKC: Hello
    "hebrew_with_points": "\u05e9\u05c1\u05b8\u05dc\u05d5\u05b9\u05dd",
    "arabic": "\u0645\u0631\u062d\u0628\u0627",
    "combining_marks": "e\u0301\u0302\u0303\u0304x",
    "cjk": "\u53d8\u91cf\u540d",
    "middle_dot": "a\u00b7\u00aa\u00ba\u0387b",
    "digraph": "digraph",
    "subgraph": "subgraph",
    "node": "node",
    "strict": "strict",
    "node_id_like": "n3",
    "cluster_like": "cluster_net",
    "long": "v" * 3000,
}
IDENTIFIER_CARRIERS = {
    "variable": "NAME = torch.ones(2, requires_grad=True)\ny = (NAME * 2).sum()\ny.backward()\n",
    "function_class": (
        "class NAME(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
        "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n"
        "        return g * 2\n\nx = torch.ones(2, requires_grad=True)\n"
        "y = NAME.apply(x).sum()\ny.backward()\n"),
    "module_attribute": (
        "class Net(torch.nn.Module):\n    def __init__(self):\n        super().__init__()\n"
        "        self.NAME = torch.nn.Tanh()\n\n    def forward(self, x):\n"
        "        return self.NAME(x)\n\nnet = Net()\nx = torch.ones(2, requires_grad=True)\n"
        "y = net(x).sum()\ny.backward()\n"),
}


# Ways to give a class (a Function's, whose backward node is named after it, or a Module's)
# a name that is not an identifier: the sandbox refuses each, so none reaches the DOT.
_CLASS_NAME = repr(f'na\x00me\n"] }} digraph {{ e }} {MARK}')
_F = ("class F(torch.autograd.Function):\n    @staticmethod\n    def forward(ctx, x):\n"
      "        return x * 2\n    @staticmethod\n    def backward(ctx, g):\n"
      "        return g * 2\n\n")
_USE_F = "x = torch.ones(2, requires_grad=True)\ny = F.apply(x).sum()\ny.backward()\n"
CLASS_NAMINGS = {
    "type_function": (
        f"F = type({_CLASS_NAME}, (torch.autograd.Function,), "
        "{'forward': staticmethod(lambda ctx, x: x * 2), "
        "'backward': staticmethod(lambda ctx, g: g * 2)})\n" + _USE_F),
    "type_module": (
        f"M = type({_CLASS_NAME}, (torch.nn.Module,), {{'forward': lambda self, x: x * 2}})\n"
        "m = M()\ny = m(torch.ones(2, requires_grad=True)).sum()\ny.backward()\n"),
    "name_assigned": _F + f"F.__name__ = {_CLASS_NAME}\n" + _USE_F,
    "qualname_assigned": _F + f"F.__qualname__ = {_CLASS_NAME}\n" + _USE_F,
    "setattr_name": _F + f"setattr(F, '__name__', {_CLASS_NAME})\n" + _USE_F,
    "backward_class_name": _F + f"setattr(F._backward_cls, '__name__', {_CLASS_NAME})\n"
    + _USE_F,
    "node_type_name": _F + _USE_F + f"setattr(type(y.grad_fn), '__name__', {_CLASS_NAME})\n"
    "z = F.apply(x).sum()\n",
    "metaclass": "class F(torch.autograd.Function, metaclass=type):\n    pass\n\n" + _USE_F,
}


def identifier_program(carrier: str, name: str) -> str:
    return IDENTIFIER_CARRIERS[carrier].replace("NAME", name)


def shown(name: str) -> str:
    """How an identifier is known once Python has read it."""
    return unicodedata.normalize("NFKC", name)


# Ways a program reads the clock or entropy without naming `time`: the next visitor who runs
# the same text must not be given this run's answer.
CLOCKS = [
    "print(np.datetime64('now'))",
    "print(np.datetime64('now', 'us'))",
    "print(np.datetime64('today'))",
    "print(np.datetime64('NOW', 's'))",
    "print(np.datetime64(b'now', 'us'))",
    "word = 'no' + 'w'\nprint(np.datetime64(word, 'us'))",
    "print(np.datetime64('now', 'ns').astype(np.int64))",
    "print(np.array(['now'], dtype='datetime64[us]'))",
    "print(np.array('now', dtype='M8[us]'))",
    "print(np.array(['now']).astype('datetime64[us]'))",
    "print(np.asarray('now', dtype='datetime64[us]'))",
    "print(np.full(1, 'now', dtype='M8[us]'))",
    "print(np.str_('now').astype('M8[us]'))",
    "print(np.datetime_as_string(np.datetime64('now', 'us')))",
    "print(np.busday_offset('today', 0, roll='forward'))",
    "print(np.is_busday('today'))",
    "print(np.array(['today'], dtype='M8[D]'))",
    "print(np.datetime64('now', 'us').item())",
    "print(torch.tensor(np.datetime64('now', 'us').astype(np.int64)))",
    "print(np.datetime64('now', 'us') - np.datetime64('2000-01-01'))",
]
ENTROPY = [
    "np.random.seed()\nprint(np.random.rand())",
    "print(torch.seed())",
    "print(np.random.SeedSequence().entropy)",
    "print(np.random.RandomState().rand())",
    "print(np.random.default_rng(None).random())",
    "print(np.random.PCG64().random_raw())",
    "import random\nrandom.seed()\nprint(random.random())",
    "import random\nprint(random.SystemRandom().random())",
]
