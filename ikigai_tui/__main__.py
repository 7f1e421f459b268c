from ikigai_tui.cli import main

raise SystemExit(main())
