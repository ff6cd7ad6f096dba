"""The judgment's background knowledge of English, written by hand (no corpus is shipped).

STOP: function words, dropped from every text. COMMON: words frequent in requests to a coding
agent and in skill descriptions, in three bands (most frequent first); they stand for a
background of documents that no installed set provides when only one skill is installed, so a
word every request uses ("file", "code", "create") weighs little and a word only one skill uses
("xlsx", "playwright", "gif") weighs much. The same list decides whether a skill's bare name,
written as a word, counts as naming it (see `common_name`).

Why names need the rule, from the data: of the 94 one-word skill names in the public corpus
(../shared/corpus/skills), the ones written as bare words in OTHER skills' dev-split queries
(fixtures/trigger-evals) three times or more are implement (8), research (8), qa (4),
prototype (3) and scan (3), all everyday words; tool and format names (pdf, docx, seaborn,
scanpy, polars) appear in others' queries at most twice, as the thing being asked about.
"""

from __future__ import annotations

import functools

STOP_TEXT = """
a about above after again against all also am an and any are as at be because been before
being below between both but by can could did do does doing don down during each else etc
ever every few for from further get gets got had has have having he her here hers him his how
i if in into is it its itself just let lets like may me might mine more most much must my
myself no nor not now of off on once one only or other our ours out over own per please pls
same shall she should so some such than that the their theirs them then there these they
this those through thus to too u under until up upon us very via was we were what whatever
when where whether which while who whom whose why will with within without would ya yet you
your yours yourself yeah ok okay hey hi hello thanks thank sure really actually basically
just maybe kinda sorta gonna wanna im ive id youre thats dont doesnt cant isnt whats lets
re ll ve doesn didn isn wasn aren won shouldn couldn wouldn haven hasn weren
"""

# Band 1: in nearly every request or description. Band 2: frequent. Band 3: common.
COMMON_TEXT = (
    """
use used using uses make made makes making want wants need needs new help helps work works
working file files code thing things way something anything stuff want task tasks time good
take look see know think go going come try trying write writing written create creating
created add adding change changes set setting run running show find check user users
skill skills ask asks asked request requests tool tools provide provides support supports
include includes including based project projects data
""",
    """
build builds building fix fixing update updates updating edit editing read reading open
list lists get generate generating generation output input format formats text content
contents page pages doc docs document documents documentation test tests testing tested
design designs review reviewing debug debugging deploy deployment git repo repository
app apps application applications web site website api apis server service services client
error errors issue issues bug bugs feature features function functions script scripts
command commands config configuration setup install installing package packages library
libraries framework frameworks model models system systems process processes workflow
workflows guide guides guidance best practice practices pattern patterns example examples
template templates specific specifically various multiple different other another first last
next simple quick small large full complete complex help automatic automatically manage
management analysis analyze analyzing report reports result results plan plans planning
implement implementation implementing improve improving quality performance team teams
""",
    """
image images video videos audio chart charts table tables report spreadsheet presentation
slide slides email emails message messages chat note notes comment comments link links
name names number numbers date dates value values type types field fields column columns
row rows line lines word words language languages string strings key keys item items
object objects class classes module modules method methods variable variables element
elements component components style styles color colors theme themes layout layouts
design review research scan triage teach wizard handoff prototype modal linear implement
debugger brainstorming qa tdd grilling devil aeon rowan humanizer infographics wayfinder
testing test docs git design deploy deploying release releases version versions branch
branches commit commits merge pull push log logs logging monitor monitoring security
secure access account accounts login auth permission permissions database databases query
queries search searching sort filter filters convert converting export import upload
download share sharing send sending save saving delete deleting remove removing copy
clean cleanup refactor refactoring optimize optimizing migrate migration explain
explaining understand learn learning study teach teaching write rewrite summary summarize
summarise draft drafts post posts blog article articles story stories brand marketing
sales business product products customer customers company meeting meetings calendar
schedule event events job jobs money price prices cost costs budget finance science
scientific research researcher paper papers journal reference references source sources
local remote online cloud mobile desktop frontend backend front end back ui ux css html
""",
)

BANDS = (0.3, 0.1, 0.03)  # share of background documents a word of each band is assumed in


@functools.cache
def stop_words() -> frozenset[str]:
    return frozenset(STOP_TEXT.split())


@functools.cache
def common_words() -> dict[str, float]:
    """word -> its assumed background document share (highest band wins)."""
    out: dict[str, float] = {}
    for share, text in zip(BANDS, COMMON_TEXT, strict=True):
        for w in text.split():
            out.setdefault(w, share)
    return out


def common_name(name: str) -> bool:
    """A skill name that is an everyday word (or a stop word): written as a bare word in a
    sentence it does not name the skill, since people write "test", "docs" or "research" for
    other reasons; `$name` and `/name` still do. Names with a hyphen, digit or dot never are."""
    low = name.lower()
    return low in stop_words() or low in common_words()
