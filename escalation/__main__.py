from escalation.cli import main

main()
