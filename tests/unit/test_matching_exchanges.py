from ikigai_tui.core.matching import Candidate, exchanges


def c(i, kind):
    return Candidate(i, kind, f"m{i}")


def test_exchanges_start_at_each_user_message_and_keep_tool_pairs_inside():
    cands = [c(1, "assistant"), c(2, "user"), c(3, "tool_call"), c(4, "tool_result"),
             c(5, "assistant"), c(6, "user"), c(7, "user"), c(8, "assistant")]
    groups = exchanges(cands)
    assert [[x.id for x in g] for g in groups] == [[1], [2, 3, 4, 5], [6], [7, 8]]


def test_no_candidates_no_exchanges():
    assert exchanges([]) == []
