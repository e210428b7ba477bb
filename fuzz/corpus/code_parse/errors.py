"unterminated
(
]
0o8 1__0 012 3j 1abc
