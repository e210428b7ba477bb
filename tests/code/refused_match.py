# cella-only
# output: ""
# Refused when compiled, before anything runs: nothing is printed.
print('compiled and ran')
command = 'go'
match command:
    case 'go':
        pass
# expect-error: NotImplementedError: 'match' statements are not supported
