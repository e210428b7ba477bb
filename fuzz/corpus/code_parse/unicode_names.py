café = αβ
x = “hi”
