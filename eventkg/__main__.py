from eventkg.cli.app import main

main()
