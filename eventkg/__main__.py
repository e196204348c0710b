from eventkg.cli import main

main()
