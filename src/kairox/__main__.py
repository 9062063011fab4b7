from kairox.cli import main

main()
