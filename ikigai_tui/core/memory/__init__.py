"""The memory tool's store: files under the memories folder, outside the log, so they
survive /clear and compaction; every change is recorded as a `memory` event.

sandbox.py keeps paths inside the folder; commands.py runs the tool's commands;
change.py is one planned change (diff, make, reverse); service.py is a session's memory
(folder, limits, whether writes are asked for) and proposal.py the change as a proposal.
"""
